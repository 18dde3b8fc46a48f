// humanoid_control.balance._core: the balance monitor's per-update computation, compiled.
//
// Why compiled code: the monitor answers every joint_states message (1 kHz on the
// hardware). In Python each Pinocchio call costs 0.1-0.4 us of interpreter and binding
// overhead and the CoM filter 1 us of float arithmetic, so an update cannot get under
// ~3 x a bare pinocchio.centerOfMass call (measured, docs/balance.md). Here the
// whole flat-feet update (joints into q, CoM, both sole placements, the check that the
// soles kept their relative placement, the CoM in the support sole's frame, the CoM
// filter, the cart-table ZMP, the margin in the held polygon, the BalanceEstimate) is
// one call.
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

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace bp = boost::python;

namespace {

PyObject *margin_name;  // "margin", interned at import

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
  // The estimate the flat-feet update returns (see Estimate below) and what the Python
  // code worked out with the support: frame name, contacts, polygon, the two sources.
  PyTypeObject *estimate_type;
  Py_ssize_t offsets[14];  // of estimate_fields in an estimate
  double min_margin;
  PyObject *held_parts[5];  // frame, contacts, polygon, base_source, contact_source
};

// The fields of a BalanceEstimate (estimator.py), in the order of `offsets`.
constexpr const char *estimate_fields[14] = {
    "stamp",   "frame",  "com",        "com_velocity", "zmp_model", "zmp_measured", "polygon",
    "contacts", "margin", "zmp_margin", "stable",       "base",      "base_source",  "contact_source"};
enum Field { STAMP, FRAME, COM, VELOCITY, ZMP_MODEL, ZMP_MEASURED, POLYGON, CONTACTS, MARGIN, ZMP_MARGIN, STABLE,
             BASE, BASE_SOURCE, CONTACT_SOURCE };

// Where each field of `type` (a slots dataclass: a member descriptor per field) sits in
// an instance; false with a TypeError unless its slots are exactly estimate_fields. The
// estimate is filled in directly: its dataclass __init__ only stores the fields, and
// running it would cost 0.4 us, a fifth of the update.
bool estimate_layout(PyObject *type, Py_ssize_t offsets[14]) {
  if (!PyType_Check(type)) {
    PyErr_SetString(PyExc_TypeError, "estimate_type must be a class");
    return false;
  }
  PyObject *slots = PyObject_GetAttrString(type, "__slots__");
  const Py_ssize_t count = slots != nullptr ? PyObject_Length(slots) : -1;
  Py_XDECREF(slots);
  if (count != 14) {
    PyErr_Clear();
    PyErr_SetString(PyExc_TypeError, "estimate_type must be a slots dataclass with the 14 BalanceEstimate fields");
    return false;
  }
  for (int i = 0; i < 14; ++i) {
    PyObject *descriptor = PyObject_GetAttrString(type, estimate_fields[i]);
    const bool member = descriptor != nullptr && Py_IS_TYPE(descriptor, &PyMemberDescr_Type) &&
                        reinterpret_cast<PyMemberDescrObject *>(descriptor)->d_member->type == T_OBJECT_EX;
    if (member) offsets[i] = reinterpret_cast<PyMemberDescrObject *>(descriptor)->d_member->offset;
    Py_XDECREF(descriptor);
    if (!member) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "estimate_type has no slot %s", estimate_fields[i]);
      return false;
    }
  }
  return true;
}

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
  Py_CLEAR(self->estimate_type);
  for (PyObject *&part : self->held_parts) Py_CLEAR(part);
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
                                   "polygon_precision", "estimate_type", "min_margin", nullptr};
  PyObject *model_object, *data_object, *index_object, *filter_object, *estimate_type;
  Py_ssize_t right, left;
  double gravity, precision, min_margin;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOnnO!ddOd:BalanceCore", const_cast<char **>(keywords),
                                   &model_object, &data_object, &index_object, &right, &left, &CoMFilterType,
                                   &filter_object, &gravity, &precision, &estimate_type, &min_margin))
    return -1;
  Py_ssize_t offsets[14];
  if (!estimate_layout(estimate_type, offsets)) return -1;
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
  self->estimate_type = reinterpret_cast<PyTypeObject *>(Py_NewRef(estimate_type));
  std::copy(offsets, offsets + 14, self->offsets);
  self->min_margin = min_margin;
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

// The cart-table ZMP from the filter (a new reference: (x, y), or None while it settles).
PyObject *model_zmp(BalanceCore *self, double stamp, const double com[3], const double acceleration[3]) {
  if (!filter_settled(self->filter, stamp)) return Py_NewRef(Py_None);
  double zmp[2];
  cart_table(com, acceleration, self->gravity, zmp);
  return float_tuple(zmp);
}

// The estimate of a flat-feet update: the CoM in the support sole's frame, the filter, the
// cart-table ZMP, the margin in the held polygon; the rest as held (new reference).
PyObject *flat_feet_estimate(BalanceCore *self, double stamp, const pinocchio::SE3 &ground) {
  const Eigen::Vector3d com = ground.actInv(self->data->com[0]);
  double point[3], velocity[3], acceleration[3];
  filter_update(self->filter, stamp, com.data(), point, velocity, acceleration);
  PyObject *polygon = self->held_parts[2];
  PyObject *margin_args[] = {polygon, PyFloat_FromDouble(com[0]), PyFloat_FromDouble(com[1])};
  PyObject *margin = (margin_args[1] && margin_args[2])
                         ? PyObject_VectorcallMethod(margin_name, margin_args, 3, nullptr)
                         : nullptr;
  Py_XDECREF(margin_args[1]);
  Py_XDECREF(margin_args[2]);
  const double margin_value = margin != nullptr ? PyFloat_AsDouble(margin) : 0.0;
  const double com_values[3] = {com[0], com[1], com[2]};
  PyObject *fields[14] = {
      PyFloat_FromDouble(stamp), Py_NewRef(self->held_parts[0]), float_tuple(com_values), float_tuple(velocity),
      model_zmp(self, stamp, com.data(), acceleration), Py_NewRef(Py_None), Py_NewRef(polygon),
      Py_NewRef(self->held_parts[1]), margin, PyFloat_FromDouble(NAN), PyBool_FromLong(margin_value >= self->min_margin),
      to_python(ground.inverse()), Py_NewRef(self->held_parts[3]), Py_NewRef(self->held_parts[4])};
  PyObject *estimate = PyErr_Occurred() ? nullptr : self->estimate_type->tp_alloc(self->estimate_type, 0);
  for (int i = 0; i < 14; ++i) {
    if (estimate == nullptr || fields[i] == nullptr) {
      for (PyObject *field : fields) Py_XDECREF(field);
      Py_XDECREF(estimate);
      return nullptr;
    }
  }
  for (int i = 0; i < 14; ++i)  // the slots of a new instance are empty: they take the references
    *reinterpret_cast<PyObject **>(reinterpret_cast<char *>(estimate) + self->offsets[i]) = fields[i];
  return estimate;
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
  return flat_feet_estimate(self, stamp, self->support_right ? right : left);
}

PyObject *BalanceCore_hold(BalanceCore *self, PyObject *const *args, Py_ssize_t nargs) {
  if (!ready(self) || !check_args("hold", nargs, 6)) return nullptr;
  const int right = PyObject_IsTrue(args[0]);
  if (right < 0) return nullptr;
  if (!PyObject_HasAttr(args[3], margin_name)) {
    PyErr_Format(PyExc_TypeError, "the polygon must have a margin method, got %s", Py_TYPE(args[3])->tp_name);
    return nullptr;
  }
  for (int i = 0; i < 5; ++i) Py_XSETREF(self->held_parts[i], Py_NewRef(args[1 + i]));
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
     "flat_feet($self, stamp, positions, /)\n--\n\nThe flat-feet update's BalanceEstimate, or None when the soles\n"
     "moved relative to each other since hold() (or nothing is held)."},
    {"hold", FASTCALL(BalanceCore_hold), METH_FASTCALL,
     "hold($self, support_right, frame, contacts, polygon, base_source, contact_source, /)\n--\n\n"
     "Keep the soles' relative placement of the last flat_feet call, its support sole and\n"
     "what the estimates take from it."},
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
      "BalanceCore(model, data, q_index, right_sole, left_sole, com_filter, gravity, polygon_precision, "
      "estimate_type, min_margin)\n--\n\n"
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
  margin_name = PyUnicode_InternFromString("margin");
  if (margin_name == nullptr || !ready_types()) return nullptr;
  PyObject *module = PyModule_Create(&module_definition);
  if (module == nullptr) return nullptr;
  if (PyModule_AddObjectRef(module, "CoMFilter", reinterpret_cast<PyObject *>(&CoMFilterType)) < 0 ||
      PyModule_AddObjectRef(module, "BalanceCore", reinterpret_cast<PyObject *>(&BalanceCoreType)) < 0) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
