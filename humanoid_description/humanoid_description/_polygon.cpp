// humanoid_description._polygon: the signed margin of a point in a convex polygon, compiled.
//
// Why compiled code: the balance monitor asks for a margin at every joint_states message
// (1 kHz on the hardware) and its whole update must cost about two bare Pinocchio CoM
// calls (docs/balance.md); the loop over the edges in Python took ~1 us of
// that. support.ConvexPolygon is this type with the vertices kept as a numpy array; every
// margin in the project (signed_margin, the offline tools) goes through it.
//
// Plain CPython API with METH_FASTCALL (a call costs ~50 ns).

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace {

struct Edge {
  double ax, ay, dx, dy, length;  // start, direction (to the next vertex), its length
};

struct Line {
  double nx, ny, c;  // inward unit normal n and offset c: n . p - c is the distance to the line
};

struct Polygon {
  PyObject_HEAD
  std::vector<Edge> *edges;
  std::vector<Line> *lines;
};

// Distance from (x, y) to an edge (a segment; a point when its length is 0).
double segment_distance(double x, double y, const Edge &e) {
  if (e.length == 0.0) return std::hypot(x - e.ax, y - e.ay);
  const double t = std::min(1.0, std::max(0.0, ((x - e.ax) * e.dx + (y - e.ay) * e.dy) / (e.length * e.length)));
  return std::hypot(x - (e.ax + t * e.dx), y - (e.ay + t * e.dy));
}

// Signed distance from (x, y) to the boundary: positive inside, negative outside, NaN
// for an empty polygon; a polygon of one or two vertices has no inside.
double margin(const Polygon *polygon, double x, double y) {
  const std::vector<Edge> &edges = *polygon->edges;
  if (edges.empty()) return std::numeric_limits<double>::quiet_NaN();
  if (edges.size() > 2) {
    // inside a convex polygon the nearest boundary point lies on the nearest edge line
    double nearest = std::numeric_limits<double>::infinity();
    for (const Line &line : *polygon->lines) nearest = std::min(nearest, line.nx * x + line.ny * y - line.c);
    if (nearest >= 0.0) return nearest;
  }
  double outside = std::numeric_limits<double>::infinity();
  for (const Edge &edge : edges) outside = std::min(outside, segment_distance(x, y, edge));
  return -outside;
}

// Reads the (n, 2) vertices; false with a Python error set otherwise.
bool read_vertices(PyObject *vertices, std::vector<double> &xy) {
  PyObject *rows = PySequence_Fast(vertices, "vertices must be a sequence of (x, y) points");
  if (rows == nullptr) return false;
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < PySequence_Fast_GET_SIZE(rows); ++i) {
    PyObject *point = PySequence_Fast(PySequence_Fast_GET_ITEM(rows, i), "a vertex must be an (x, y) point");
    if (point == nullptr) {
      ok = false;
      break;
    }
    if (PySequence_Fast_GET_SIZE(point) != 2) {
      PyErr_Format(PyExc_ValueError, "vertex %zd has %zd coordinates, expected 2", i, PySequence_Fast_GET_SIZE(point));
      ok = false;
    }
    for (Py_ssize_t k = 0; ok && k < 2; ++k) {
      const double value = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(point, k));
      ok = !(value == -1.0 && PyErr_Occurred());
      xy.push_back(value);
    }
    Py_DECREF(point);
  }
  Py_DECREF(rows);
  return ok;
}

void release(Polygon *self) {
  delete self->edges;
  delete self->lines;
  self->edges = nullptr;
  self->lines = nullptr;
}

int Polygon_init(Polygon *self, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"vertices", nullptr};
  PyObject *vertices;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:ConvexPolygon", const_cast<char **>(keywords), &vertices))
    return -1;
  std::vector<double> xy;
  if (!read_vertices(vertices, xy)) return -1;
  release(self);
  self->edges = new std::vector<Edge>();
  self->lines = new std::vector<Line>();
  const std::size_t count = xy.size() / 2;
  for (std::size_t i = 0; i < count; ++i) {
    const double ax = xy[2 * i], ay = xy[2 * i + 1];
    const double bx = xy[2 * ((i + 1) % count)], by = xy[2 * ((i + 1) % count) + 1];
    const double length = std::hypot(bx - ax, by - ay);
    self->edges->push_back({ax, ay, bx - ax, by - ay, length});
    if (length > 0.0) {
      const double nx = -(by - ay) / length, ny = (bx - ax) / length;
      self->lines->push_back({nx, ny, nx * ax + ny * ay});
    }
  }
  return 0;
}

void Polygon_dealloc(Polygon *self) {
  release(self);
  Py_TYPE(self)->tp_free(reinterpret_cast<PyObject *>(self));
}

bool ready(const Polygon *self) {
  if (self->edges != nullptr) return true;
  PyErr_SetString(PyExc_RuntimeError, "ConvexPolygon.__init__ was not called");
  return false;
}

PyObject *Polygon_margin(Polygon *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError, "margin() takes 2 arguments (x, y), %zd given", nargs);
    return nullptr;
  }
  const double x = PyFloat_AsDouble(args[0]);
  if (x == -1.0 && PyErr_Occurred()) return nullptr;
  const double y = PyFloat_AsDouble(args[1]);
  if ((y == -1.0 && PyErr_Occurred()) || !ready(self)) return nullptr;
  return PyFloat_FromDouble(margin(self, x, y));
}

Py_ssize_t Polygon_length(Polygon *self) { return ready(self) ? static_cast<Py_ssize_t>(self->edges->size()) : -1; }

PyMethodDef Polygon_methods[] = {
    {"margin", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Polygon_margin)), METH_FASTCALL,
     "margin($self, x, y, /)\n--\n\nSigned distance from (x, y) to the boundary: positive inside, negative outside,\n"
     "NaN for an empty polygon (see :func:`signed_margin`)."},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot Polygon_slots[] = {
    {Py_tp_doc,
     const_cast<char *>("ConvexPolygon(vertices)\n--\n\nA convex polygon's edges prepared for margin queries.")},
    {Py_tp_new, reinterpret_cast<void *>(PyType_GenericNew)},
    {Py_tp_init, reinterpret_cast<void *>(Polygon_init)},
    {Py_tp_dealloc, reinterpret_cast<void *>(Polygon_dealloc)},
    {Py_tp_methods, Polygon_methods},
    {Py_sq_length, reinterpret_cast<void *>(Polygon_length)},
    {0, nullptr}};

PyType_Spec Polygon_spec = {"humanoid_description._polygon.ConvexPolygon", sizeof(Polygon), 0,
                            Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, Polygon_slots};

PyModuleDef module_definition = {PyModuleDef_HEAD_INIT, "_polygon",
                                 "Signed margins in convex polygons, compiled (see humanoid_description.support).", -1,
                                 nullptr, nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__polygon() {
  PyObject *module = PyModule_Create(&module_definition);
  if (module == nullptr) return nullptr;
  PyObject *type = PyType_FromSpec(&Polygon_spec);
  if (type == nullptr || PyModule_AddObject(module, "ConvexPolygon", type) < 0) {
    Py_XDECREF(type);
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
