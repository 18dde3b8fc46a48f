// humanoid_control.balance._core: the balance monitor's per-update computation, compiled.
//
// Why compiled code: the monitor answers every joint_states message (1 kHz on the
// hardware). In Python each Pinocchio call costs 0.1-0.4 us of interpreter and binding
// overhead and the CoM filter 1 us of float arithmetic, so an update cannot get under
// ~3 x a bare pinocchio.centerOfMass call (measured, NOTES.md "Balance monitor"). Here the
// whole flat-feet update (joints into q, CoM, both sole placements, the check that the
// soles kept their relative placement, the CoM in the support sole's frame, the CoM
// filter, the cart-table ZMP) is one call.
//
// The model and data are the estimator's own pinocchio.Model and pinocchio.Data (taken by
// reference through boost.python, as Pinocchio's bindings hold them): no copy of the
// model, and the Python code that handles the rare cases (new support polygon, sensor
// paths) reads the frame placements this code computed.
//
// Plain CPython API with METH_FASTCALL: a call costs ~50 ns (pybind11's dispatch several
// times that). What stays in Python: estimator.py's logic of contacts, support sole and
// polygon (run when the soles move relative to each other) and the sensor paths.

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <pinocchio/algorithm/center-of-mass.hpp>
#include <pinocchio/algorithm/frames.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/multibody.hpp>

#include <boost/python.hpp>

#include <cmath>
#include <cstring>
#include <vector>

namespace bp = boost::python;

namespace {

// ---------------------------------------------------------------------------------------
// Small helpers: Python floats and tuples.

// A tuple of doubles (new reference, NULL on error).
template <std::size_t N>
PyObject *float_tuple(const double (&values)[N]) {
  PyObject *tuple = PyTuple_New(N);
  if (tuple == nullptr) return nullptr;
  for (std::size_t i = 0; i < N; ++i) {
    PyObject *item = PyFloat_FromDouble(values[i]);
    if (item == nullptr) {
      Py_DECREF(tuple);
      return nullptr;
    }
    PyTuple_SET_ITEM(tuple, i, item);
  }
  return tuple;
}

// Reads a sequence of exactly `count` numbers into `out`; false with a Python error set
// (naming `what`) otherwise.
bool read_doubles(PyObject *sequence, Py_ssize_t count, double *out, const char *what) {
  PyObject *fast = PySequence_Fast(sequence, what);
  if (fast == nullptr) return false;
  const Py_ssize_t size = PySequence_Fast_GET_SIZE(fast);
  if (size != count) {
    PyErr_Format(PyExc_ValueError, "expected %zd %s, got %zd", count, what, size);
    Py_DECREF(fast);
    return false;
  }
  PyObject **items = PySequence_Fast_ITEMS(fast);
  for (Py_ssize_t i = 0; i < count; ++i) {
    out[i] = PyFloat_AsDouble(items[i]);
    if (out[i] == -1.0 && PyErr_Occurred()) {
      Py_DECREF(fast);
      return false;
    }
  }
  Py_DECREF(fast);
  return true;
}

bool check_args(const char *name, Py_ssize_t nargs, Py_ssize_t expected) {
  if (nargs == expected) return true;
  PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", name, expected, nargs);
  return false;
}

// ---------------------------------------------------------------------------------------
// The CoM filter: a critically damped second-order low-pass per axis, integrated exactly
// between samples with the input interpolated linearly (see com_filter.py for the maths).

struct CoMFilter {
  PyObject_HEAD
  double omega;    // natural frequency, rad/s
  double stamp;    // of the last sample, NaN after a reset
  double period;   // the sampling period the coefficients are for
  double started;  // robot time of the first sample since the reset, NaN before one
  double a11, a12, a21, a22, slope_scale;  // e^(A dt) and 1 / dt
  double state[9];  // filtered x, y, z, their velocities, the previous sample's x, y, z
};

// e^(A dt) = decay * [[1 + w dt, dt], [-w^2 dt, 1 - w dt]], and 1 / dt (0 for dt = 0).
void filter_step(CoMFilter *f, double dt) {
  const double w = f->omega, wdt = w * dt, decay = std::exp(-wdt);
  f->a11 = decay * (1.0 + wdt);
  f->a12 = decay * dt;
  f->a21 = -decay * w * wdt;
  f->a22 = decay * (1.0 - wdt);
  f->slope_scale = dt > 0.0 ? 1.0 / dt : 0.0;
}

void filter_reset(CoMFilter *f) {
  f->stamp = NAN;
  f->started = NAN;
}

double filter_delay(const CoMFilter *f) { return 2.0 / f->omega; }

bool filter_settled(const CoMFilter *f, double stamp) {
  return stamp - f->started >= 3.0 * filter_delay(f);
}

// Takes the sample u at `stamp`; writes the filtered point, its velocity and acceleration.
// The first sample after a reset (or after time went back) starts the filter at rest there.
void filter_update(CoMFilter *f, double stamp, const double u[3], double point[3], double velocity[3],
                   double acceleration[3]) {
  double dt = stamp - f->stamp;
  if (!(dt > 0.0)) {
    if (dt != 0.0) {  // first sample (NaN: never equal) or time went back
      f->started = stamp;
      for (int i = 0; i < 3; ++i) {
        f->state[i] = u[i];
        f->state[3 + i] = 0.0;
        f->state[6 + i] = u[i];
      }
    }
    dt = 0.0;
  }
  if (std::fabs(dt - f->period) > 1e-9 || dt == 0.0) {
    filter_step(f, dt);
    f->period = dt;
  }
  const double lag = 2.0 / f->omega, w2 = f->omega * f->omega, two_w = 2.0 * f->omega;
  for (int i = 0; i < 3; ++i) {
    // Relative to the filter's steady response to the input ramp of slope s (position
    // u - 2 s / w, velocity s) the state decays by e^(A dt), exactly, for any dt.
    const double previous = f->state[6 + i];
    const double s = (u[i] - previous) * f->slope_scale;
    const double e = f->state[i] - previous + lag * s, v = f->state[3 + i] - s;
    const double x = u[i] - lag * s + f->a11 * e + f->a12 * v;
    const double dx = s + f->a21 * e + f->a22 * v;
    f->state[i] = point[i] = x;
    f->state[3 + i] = velocity[i] = dx;
    f->state[6 + i] = u[i];
    acceleration[i] = w2 * (u[i] - x) - two_w * dx;
  }
  f->stamp = stamp;
}

int CoMFilter_init(CoMFilter *self, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"cutoff_hz", nullptr};
  PyObject *cutoff_object;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:CoMFilter", const_cast<char **>(keywords), &cutoff_object))
    return -1;
  const double cutoff = PyFloat_AsDouble(cutoff_object);
  if (cutoff == -1.0 && PyErr_Occurred()) return -1;
  if (!(cutoff > 0.0)) {
    PyErr_Format(PyExc_ValueError, "the filter cut-off must be > 0 Hz, got %S", cutoff_object);
    return -1;
  }
  self->omega = 2.0 * M_PI * cutoff;
  self->period = NAN;
  filter_reset(self);
  filter_step(self, 0.0);
  for (double &value : self->state) value = 0.0;
  return 0;
}

PyObject *CoMFilter_reset(CoMFilter *self, PyObject *) {
  filter_reset(self);
  Py_RETURN_NONE;
}

PyObject *CoMFilter_settled(CoMFilter *self, PyObject *stamp_object) {
  const double stamp = PyFloat_AsDouble(stamp_object);
  if (stamp == -1.0 && PyErr_Occurred()) return nullptr;
  return PyBool_FromLong(filter_settled(self, stamp));
}

PyObject *CoMFilter_update(CoMFilter *self, PyObject *const *args, Py_ssize_t nargs) {
  if (!check_args("update", nargs, 2)) return nullptr;
  const double stamp = PyFloat_AsDouble(args[0]);
  if (stamp == -1.0 && PyErr_Occurred()) return nullptr;
  double u[3], point[3], velocity[3], acceleration[3];
  if (!read_doubles(args[1], 3, u, "point coordinates")) return nullptr;
  filter_update(self, stamp, u, point, velocity, acceleration);
  return Py_BuildValue("(ddd)(ddd)(ddd)", point[0], point[1], point[2], velocity[0], velocity[1], velocity[2],
                       acceleration[0], acceleration[1], acceleration[2]);
}

PyObject *CoMFilter_delay(CoMFilter *self, void *) { return PyFloat_FromDouble(filter_delay(self)); }

PyMethodDef CoMFilter_methods[] = {
    {"reset", reinterpret_cast<PyCFunction>(CoMFilter_reset), METH_NOARGS,
     "reset($self, /)\n--\n\nForget the past (after a jump of the frame, or of time)."},
    {"settled", reinterpret_cast<PyCFunction>(CoMFilter_settled), METH_O,
     "settled($self, stamp, /)\n--\n\nHas the filter run for three delays since its last reset (its start transient,\n"
     "from rest at the first sample, has then decayed to 2 % of it)."},
    {"update", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(CoMFilter_update)), METH_FASTCALL,
     "update($self, stamp, point, /)\n--\n\nTake the sample ``point`` at ``stamp`` (s); returns the filtered point, its "
     "velocity\nand its acceleration (three 3-tuples). The first sample after a reset (or after time\nwent back) "
     "starts the filter at rest there."},
    {nullptr, nullptr, 0, nullptr}};

PyMemberDef CoMFilter_members[] = {
    {"omega", T_DOUBLE, offsetof(CoMFilter, omega), 0, "natural frequency 2 pi f (rad/s)"},
    {"started", T_DOUBLE, offsetof(CoMFilter, started), 0,
     "robot time of the first sample since the last reset (NaN before one)"},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef CoMFilter_getset[] = {
    {"delay", reinterpret_cast<getter>(CoMFilter_delay), nullptr, "Group delay (s) of the filter for slow motions.",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject CoMFilterType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// ---------------------------------------------------------------------------------------
// The cart-table ZMP (Kajita's linear inverted pendulum): p = c - (z_c / g) c'' for x, y.

void cart_table(const double com[3], const double acceleration[3], double gravity, double zmp[2]) {
  const double scale = com[2] / gravity;
  zmp[0] = com[0] - scale * acceleration[0];
  zmp[1] = com[1] - scale * acceleration[1];
}

PyObject *cart_table_zmp(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (!check_args("cart_table_zmp", nargs, 3)) return nullptr;
  double com[3], acceleration[3], zmp[2];
  if (!read_doubles(args[0], 3, com, "CoM coordinates") ||
      !read_doubles(args[1], 3, acceleration, "acceleration coordinates"))
    return nullptr;
  const double gravity = PyFloat_AsDouble(args[2]);
  if (gravity == -1.0 && PyErr_Occurred()) return nullptr;
  cart_table(com, acceleration, gravity, zmp);
  return float_tuple(zmp);
}

// ---------------------------------------------------------------------------------------
// The kinematics and the flat-feet update on the estimator's Pinocchio model and data.

struct BalanceCore {
  PyObject_HEAD
  PyObject *model_object;   // the pinocchio.Model and pinocchio.Data, kept alive
  PyObject *data_object;
  CoMFilter *filter;        // the estimator's CoM filter
  pinocchio::Model *model;  // the C++ objects the two Python objects hold
  pinocchio::Data *data;
  Eigen::VectorXd *q;
  std::vector<Eigen::Index> *q_index;  // where each joint (canonical order) sits in q
  pinocchio::FrameIndex right, left;   // the sole frames (flat feet of a biped)
  double gravity, precision;
  pinocchio::SE3 *relative;  // the left sole in the right sole's frame, last computed
  pinocchio::SE3 *held;      // ... when the support was last worked out
  bool holding;              // a support is held (else the next flat_feet returns None)
  bool support_right;        // the held support sole: right (else left)
};

// A buffer format of native doubles ("d", or with the native byte order spelled out).
bool is_double_format(const char *format) {
  return format != nullptr && (std::strcmp(format, "d") == 0 || std::strcmp(format, "=d") == 0 ||
                               (PY_LITTLE_ENDIAN && std::strcmp(format, "<d") == 0));
}

// Joint positions (canonical order) into q: a float64 buffer is read directly, any other
// sequence of numbers element by element.
bool set_positions(BalanceCore *self, PyObject *positions) {
  const std::vector<Eigen::Index> &index = *self->q_index;
  const Py_ssize_t count = static_cast<Py_ssize_t>(index.size());
  Py_buffer view;
  if (PyObject_CheckBuffer(positions) && PyObject_GetBuffer(positions, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0) {
    const bool doubles = view.ndim == 1 && view.itemsize == 8 && is_double_format(view.format);
    if (doubles && view.shape[0] == count) {
      const double *values = static_cast<const double *>(view.buf);
      for (Py_ssize_t i = 0; i < count; ++i) (*self->q)[index[i]] = values[i];
      PyBuffer_Release(&view);
      return true;
    }
    PyBuffer_Release(&view);
  }
  PyErr_Clear();
  std::vector<double> values(count);
  if (!read_doubles(positions, count, values.data(), "joint positions")) return false;
  for (Py_ssize_t i = 0; i < count; ++i) (*self->q)[index[i]] = values[i];
  return true;
}

// The base placement (x, y, z, qx, qy, qz, qw) into q; None = the identity.
bool set_base(BalanceCore *self, PyObject *xyzquat) {
  double base[7] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0};
  if (xyzquat != Py_None && !read_doubles(xyzquat, 7, base, "base placement values (x, y, z, qx, qy, qz, qw)"))
    return false;
  self->q->head<7>() = Eigen::Map<const Eigen::Matrix<double, 7, 1>>(base);
  return true;
}

// A pinocchio.SE3 (new reference) holding a copy of `placement`.
PyObject *to_python(const pinocchio::SE3 &placement) {
  try {
    return bp::incref(bp::object(placement).ptr());
  } catch (const bp::error_already_set &) {
    return nullptr;
  }
}

// Drops what __init__ took (dealloc, or __init__ called again).
void release(BalanceCore *self) {
  Py_CLEAR(self->model_object);
  Py_CLEAR(self->data_object);
  Py_CLEAR(self->filter);
  delete self->q;
  delete self->q_index;
  delete self->relative;
  delete self->held;
  self->q = nullptr;
  self->q_index = nullptr;
  self->relative = self->held = nullptr;
  self->model = nullptr;
  self->data = nullptr;
}

void BalanceCore_dealloc(BalanceCore *self) {
  release(self);
  Py_TYPE(self)->tp_free(reinterpret_cast<PyObject *>(self));
}

bool ready(const BalanceCore *self) {
  if (self->model != nullptr) return true;
  PyErr_SetString(PyExc_RuntimeError, "BalanceCore.__init__ was not called");
  return false;
}

// The C++ object a boost.python-wrapped Pinocchio object holds; NULL with a TypeError.
template <class T>
T *held_object(PyObject *object, const char *what) {
  bp::extract<T &> extracted(object);
  if (!extracted.check()) {
    PyErr_Format(PyExc_TypeError, "expected a %s, got %s", what, Py_TYPE(object)->tp_name);
    return nullptr;
  }
  return &extracted();
}

int BalanceCore_init(BalanceCore *self, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"model", "data", "q_index", "right_sole", "left_sole", "com_filter", "gravity",
                                   "polygon_precision", nullptr};
  PyObject *model_object, *data_object, *index_object, *filter_object;
  Py_ssize_t right, left;
  double gravity, precision;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOnnO!dd:BalanceCore", const_cast<char **>(keywords),
                                   &model_object, &data_object, &index_object, &right, &left, &CoMFilterType,
                                   &filter_object, &gravity, &precision))
    return -1;
  pinocchio::Model *model = held_object<pinocchio::Model>(model_object, "pinocchio.Model");
  pinocchio::Data *data = model ? held_object<pinocchio::Data>(data_object, "pinocchio.Data") : nullptr;
  if (data == nullptr) return -1;
  const Py_ssize_t frames = static_cast<Py_ssize_t>(model->frames.size());
  if (right < 0 || right >= frames || left < 0 || left >= frames) {
    PyErr_Format(PyExc_ValueError, "sole frame ids %zd, %zd: the model has %zd frames", right, left, frames);
    return -1;
  }
  PyObject *fast = PySequence_Fast(index_object, "q_index must be a sequence of integers");
  if (fast == nullptr) return -1;
  auto *index = new std::vector<Eigen::Index>();
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i) {
    const Py_ssize_t at = PyNumber_AsSsize_t(PySequence_Fast_GET_ITEM(fast, i), PyExc_ValueError);
    if (at == -1 && PyErr_Occurred()) break;
    if (at < 7 || at >= model->nq) {
      PyErr_Format(PyExc_ValueError, "q_index %zd is not a joint's place in q (7 to %d)", at, model->nq - 1);
      break;
    }
    index->push_back(at);
  }
  Py_DECREF(fast);
  if (PyErr_Occurred()) {
    delete index;
    return -1;
  }
  release(self);
  Py_INCREF(model_object);
  Py_INCREF(data_object);
  Py_INCREF(filter_object);
  self->model_object = model_object;
  self->data_object = data_object;
  self->filter = reinterpret_cast<CoMFilter *>(filter_object);
  self->model = model;
  self->data = data;
  self->q = new Eigen::VectorXd(pinocchio::neutral(*model));
  self->q_index = index;
  self->right = static_cast<pinocchio::FrameIndex>(right);
  self->left = static_cast<pinocchio::FrameIndex>(left);
  self->gravity = gravity;
  self->precision = precision;
  self->relative = new pinocchio::SE3(pinocchio::SE3::Identity());
  self->held = new pinocchio::SE3(pinocchio::SE3::Identity());
  self->holding = false;
  self->support_right = true;
  return 0;
}

// com(positions, xyzquat) -> (x, y, z): the whole-body CoM with the base at xyzquat (None:
// the identity); the joint placements stay in the data for updateFramePlacement.
PyObject *BalanceCore_com(BalanceCore *self, PyObject *const *args, Py_ssize_t nargs) {
  if (!ready(self) || !check_args("com", nargs, 2) || !set_positions(self, args[0]) || !set_base(self, args[1]))
    return nullptr;
  const Eigen::Vector3d &com = pinocchio::centerOfMass(*self->model, *self->data, *self->q, false);
  const double values[3] = {com[0], com[1], com[2]};
  return float_tuple(values);
}

// The result of a flat-feet update: (com, velocity, zmp or None, base placement).
PyObject *flat_feet_result(BalanceCore *self, double stamp, const pinocchio::SE3 &ground) {
  const Eigen::Vector3d com = ground.actInv(self->data->com[0]);
  double point[3], velocity[3], acceleration[3];
  filter_update(self->filter, stamp, com.data(), point, velocity, acceleration);
  PyObject *zmp;
  if (filter_settled(self->filter, stamp)) {
    double values[2];
    cart_table(com.data(), acceleration, self->gravity, values);
    zmp = float_tuple(values);
  } else {
    zmp = Py_NewRef(Py_None);
  }
  const double com_values[3] = {com[0], com[1], com[2]};
  PyObject *result = PyTuple_New(4);
  PyObject *items[4] = {float_tuple(com_values), float_tuple(velocity), zmp, to_python(ground.inverse())};
  for (int i = 0; i < 4; ++i) {
    if (items[i] == nullptr || result == nullptr) {
      for (PyObject *item : items) Py_XDECREF(item);
      Py_XDECREF(result);
      return nullptr;
    }
  }
  for (int i = 0; i < 4; ++i) PyTuple_SET_ITEM(result, i, items[i]);
  return result;
}

// flat_feet(stamp, positions) -> (com, velocity, zmp, base) | None: see the stub (_core.pyi).
PyObject *BalanceCore_flat_feet(BalanceCore *self, PyObject *const *args, Py_ssize_t nargs) {
  if (!ready(self) || !check_args("flat_feet", nargs, 2)) return nullptr;
  const double stamp = PyFloat_AsDouble(args[0]);
  if ((stamp == -1.0 && PyErr_Occurred()) || !set_positions(self, args[1])) return nullptr;
  self->q->head<7>() << 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0;
  pinocchio::centerOfMass(*self->model, *self->data, *self->q, false);
  const pinocchio::SE3 &right = pinocchio::updateFramePlacement(*self->model, *self->data, self->right);
  const pinocchio::SE3 &left = pinocchio::updateFramePlacement(*self->model, *self->data, self->left);
  *self->relative = right.actInv(left);
  if (!self->holding || !self->relative->isApprox(*self->held, self->precision)) Py_RETURN_NONE;
  return flat_feet_result(self, stamp, self->support_right ? right : left);
}

PyObject *BalanceCore_hold(BalanceCore *self, PyObject *support_right) {
  const int right = PyObject_IsTrue(support_right);
  if (right < 0 || !ready(self)) return nullptr;
  *self->held = *self->relative;
  self->holding = true;
  self->support_right = right;
  Py_RETURN_NONE;
}

PyObject *BalanceCore_forget(BalanceCore *self, PyObject *) {
  self->holding = false;
  Py_RETURN_NONE;
}

#define FASTCALL(function) reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(function))

PyMethodDef BalanceCore_methods[] = {
    {"com", FASTCALL(BalanceCore_com), METH_FASTCALL,
     "com($self, positions, xyzquat, /)\n--\n\nWhole-body CoM (x, y, z) with the base at ``xyzquat`` (None: the identity)."},
    {"flat_feet", FASTCALL(BalanceCore_flat_feet), METH_FASTCALL,
     "flat_feet($self, stamp, positions, /)\n--\n\nThe flat-feet update: (com, velocity, zmp or None, base), or None when the "
     "soles\nmoved relative to each other since hold() (or nothing is held)."},
    {"hold", reinterpret_cast<PyCFunction>(BalanceCore_hold), METH_O,
     "hold($self, support_right, /)\n--\n\nKeep the soles' relative placement of the last flat_feet call and its support sole."},
    {"forget", reinterpret_cast<PyCFunction>(BalanceCore_forget), METH_NOARGS,
     "forget($self, /)\n--\n\nDrop the held support: the next flat_feet call returns None."},
    {nullptr, nullptr, 0, nullptr}};

PyTypeObject BalanceCoreType = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyMethodDef module_functions[] = {
    {"cart_table_zmp", FASTCALL(cart_table_zmp), METH_FASTCALL,
     "cart_table_zmp(com, acceleration, gravity, /)\n--\n\nZMP of the cart-table model on the ground plane z = 0: "
     "p = c - (z_c / g) c'' for x\nand y, z_c the CoM height above the ground (Kajita's linear inverted pendulum)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_definition = {PyModuleDef_HEAD_INIT, "_core",
                                 "The balance monitor's per-update computation, compiled (see _core.pyi).", -1,
                                 module_functions};

bool ready_types() {
  CoMFilterType.tp_name = "humanoid_control.balance._core.CoMFilter";
  CoMFilterType.tp_basicsize = sizeof(CoMFilter);
  CoMFilterType.tp_flags = Py_TPFLAGS_DEFAULT;
  CoMFilterType.tp_doc =
      "CoMFilter(cutoff_hz)\n--\n\nCritically damped second-order low-pass on a 3-D point, per axis, with its\n"
      "velocity and acceleration (com_filter.py: the maths). The monitor also smooths the\n"
      "measured ZMP with one. Raises ValueError unless cutoff_hz > 0.";
  CoMFilterType.tp_new = PyType_GenericNew;
  CoMFilterType.tp_init = reinterpret_cast<initproc>(CoMFilter_init);
  CoMFilterType.tp_methods = CoMFilter_methods;
  CoMFilterType.tp_members = CoMFilter_members;
  CoMFilterType.tp_getset = CoMFilter_getset;
  BalanceCoreType.tp_name = "humanoid_control.balance._core.BalanceCore";
  BalanceCoreType.tp_basicsize = sizeof(BalanceCore);
  BalanceCoreType.tp_flags = Py_TPFLAGS_DEFAULT;
  BalanceCoreType.tp_doc =
      "BalanceCore(model, data, q_index, right_sole, left_sole, com_filter, gravity, polygon_precision)\n--\n\n"
      "The estimator's kinematics on its own pinocchio.Model and Data (held by reference:\n"
      "frame placements it computes are in ``data`` for the Python code), and the flat-feet\n"
      "update of a biped (the hardware's usual case).";
  BalanceCoreType.tp_new = PyType_GenericNew;
  BalanceCoreType.tp_init = reinterpret_cast<initproc>(BalanceCore_init);
  BalanceCoreType.tp_dealloc = reinterpret_cast<destructor>(BalanceCore_dealloc);
  BalanceCoreType.tp_methods = BalanceCore_methods;
  return PyType_Ready(&CoMFilterType) == 0 && PyType_Ready(&BalanceCoreType) == 0;
}

}  // namespace

PyMODINIT_FUNC PyInit__core() {
  // Pinocchio's bindings register the boost.python converters of Model, Data and SE3.
  PyObject *pinocchio_module = PyImport_ImportModule("pinocchio");
  if (pinocchio_module == nullptr) return nullptr;
  Py_DECREF(pinocchio_module);
  if (!ready_types()) return nullptr;
  PyObject *module = PyModule_Create(&module_definition);
  if (module == nullptr) return nullptr;
  if (PyModule_AddObjectRef(module, "CoMFilter", reinterpret_cast<PyObject *>(&CoMFilterType)) < 0 ||
      PyModule_AddObjectRef(module, "BalanceCore", reinterpret_cast<PyObject *>(&BalanceCoreType)) < 0) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
