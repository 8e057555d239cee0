//===- Tracing.cpp - Python proxies over the C++ tracer -------------------===//

#include "Tracing.h"
#include "Indexing.h"
#include "NumPy.h"

#include "picokernel/Frontend/TraceIR.h"

#include "mlir/IR/BuiltinTypes.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <frameobject.h>

#include <cmath>
#include <cstring>
#include <string_view>

namespace nb = nanobind;

namespace pk::python {

void raise(PyObject *type, const std::string &message) {
  // Kernel code that catches it may depend on the sizes (Tracer::readSizes).
  pk::detail::noteTraceError();
  PyErr_SetString(type, message.c_str());
  throw nb::python_error();
}

/// The directory of the picokernel package's Python files, with a trailing
/// slash ("" if it cannot be found).
static const std::string &packageDirectory() {
  static const std::string directory = [] {
    try {
      std::string file = nb::cast<std::string>(
          nb::module_::import_("picokernel").attr("__file__"));
      return file.substr(0, file.rfind('/') + 1);
    } catch (const std::exception &) {
      PyErr_Clear();
      return std::string();
    }
  }();
  return directory;
}

static SourceLoc frameLocation(PyFrameObject *frame) {
  PyCodeObject *code = PyFrame_GetCode(frame); // new reference
  SourceLoc location;
  if (const char *file = PyUnicode_AsUTF8(code->co_filename))
    location.file = file;
  else
    PyErr_Clear();
  Py_DECREF(code);
  location.line = unsigned(PyFrame_GetLineNumber(frame));
  return location;
}

SourceLoc definitionOf(nb::handle function) {
  nb::object code = nb::getattr(function, "__code__", nb::none());
  if (code.is_none())
    return {};
  return {nb::cast<std::string>(code.attr("co_filename")),
          nb::cast<unsigned>(code.attr("co_firstlineno")), 0};
}

SourceLoc pythonLocation() {
  PyFrameObject *frame = PyEval_GetFrame(); // borrowed
  if (!frame)
    return {};
  // The user's line: the innermost frame outside picokernel's own Python
  // (np.maximum and picokernel.where reach the tracer through it).
  const std::string &package = packageDirectory();
  SourceLoc innermost = frameLocation(frame);
  nb::object held;
  for (SourceLoc location = innermost;;) {
    if (package.empty() || location.file.rfind(package, 0) != 0)
      return location;
    held = nb::steal((PyObject *)PyFrame_GetBack(frame)); // new reference
    frame = (PyFrameObject *)held.ptr();
    if (!frame)
      return innermost;
    location = frameLocation(frame);
  }
}

namespace {

/// An ndarray's elements as bytes in row-major order.
Operand arrayOperand(PyArrayObject *array, DType dtype, SourceLoc where) {
  nb::object owned = nb::steal(PyArray_CheckFromAny(
      (PyObject *)array, nullptr, 0, 0,
      NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_NOTSWAPPED, nullptr));
  if (!owned.is_valid())
    throw nb::python_error();
  auto *contiguous = (PyArrayObject *)owned.ptr();
  Shape shape(PyArray_DIMS(contiguous),
              PyArray_DIMS(contiguous) + PyArray_NDIM(contiguous));
  auto *data = (const uint8_t *)PyArray_DATA(contiguous);
  std::vector<uint8_t> bytes(data, data + PyArray_NBYTES(contiguous));
  return Operand::fromArray(dtype, std::move(shape), std::move(bytes),
                            std::move(where));
}

/// A 0-d array's single element as a typed number.
Operand typedNumber(PyArrayObject *array, DType dtype, SourceLoc where) {
  nb::object item = nb::steal(
      PyArray_GETITEM(array, static_cast<const char *>(PyArray_DATA(array))));
  if (!item.is_valid())
    throw nb::python_error();
  Operand number =
      isFloat(dtype)         ? Operand::fromFloat(nb::cast<double>(item), where)
      : dtype == DType::Bool ? Operand::fromBool(nb::cast<bool>(item), where)
      : dtype != DType::U64
          ? Operand::fromInteger(nb::cast<int64_t>(item), where)
      : nb::cast<uint64_t>(item) > uint64_t(INT64_MAX)
          ? Operand::fromUnsignedBigInteger(nb::cast<uint64_t>(item), where)
          : Operand::fromInteger(nb::cast<int64_t>(item), where);
  return typed(number, dtype);
}

constexpr const char *kSupportedDTypes =
    "(supported: bool, int8/16/32/64, uint8/16/32/64, float16/32/64, "
    "bfloat16)";

/// A number or array in the kernel's code of a dtype picokernel lacks, at
/// the user's line.
[[noreturn]] void unsupportedDType(const std::string &what) {
  throw nb::type_error((pythonLocation().str() +
                        ": error: picokernel does not support " + what + " " +
                        kSupportedDTypes)
                           .c_str());
}

} // namespace

std::optional<Operand> toOperand(nb::handle object) {
  if (nb::isinstance<Value>(object))
    return Operand(nb::cast<const Value &>(object), pythonLocation());
  PyObject *ptr = object.ptr();
  // NumPy scalars first: np.float64 subclasses Python's float, but NumPy
  // types it strongly, like a 0-d array.
  if (PyArray_IsScalar(ptr, Generic) || PyArray_Check(ptr)) {
    nb::object array =
        nb::steal(PyArray_FromAny(ptr, nullptr, 0, 0, 0, nullptr));
    if (!array.is_valid())
      throw nb::python_error();
    auto *arr = (PyArrayObject *)array.ptr();
    std::optional<DType> dtype = fromNumPy(PyArray_DESCR(arr));
    if (!dtype)
      unsupportedDType("arrays of dtype " + numpyName(PyArray_DESCR(arr)));
    if (PyArray_NDIM(arr) == 0)
      return typedNumber(arr, *dtype, pythonLocation());
    return arrayOperand(arr, *dtype, pythonLocation());
  }
  if (PyBool_Check(ptr))
    return Operand::fromBool(ptr == Py_True, pythonLocation());
  if (PyLong_Check(ptr)) {
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(ptr, &overflow);
    if (overflow) {
      // Beyond int64: NumPy converts it to a float dtype (and compares
      // integers with it by its sign); the tracer raises elsewhere.
      if (overflow > 0) {
        unsigned long long bits = PyLong_AsUnsignedLongLong(ptr);
        if (!PyErr_Occurred())
          return Operand::fromUnsignedBigInteger(bits, pythonLocation());
        PyErr_Clear();
      }
      // Beyond a double's range it is an infinity of its sign, which only
      // comparisons with integer arrays accept (NumPy: "int too large to
      // convert to float" elsewhere).
      double number = PyLong_AsDouble(ptr);
      if (number == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        number = std::copysign(HUGE_VAL, double(overflow));
      }
      return Operand::fromBigInteger(number, pythonLocation());
    }
    return Operand::fromInteger(value, pythonLocation());
  }
  if (PyFloat_Check(ptr))
    return Operand::fromFloat(PyFloat_AS_DOUBLE(ptr), pythonLocation());
  if (PyComplex_Check(ptr))
    unsupportedDType("complex numbers");
  return std::nullopt;
}

namespace {

using BinaryFn = Value (*)(const Operand &, const Operand &);

/// `lhs op rhs` with a Value on one side; NotImplemented for other types,
/// so that Python raises its usual TypeError.
template <BinaryFn fn, bool reflected>
nb::object binary(const Value &self, nb::handle other) {
  std::optional<Operand> operand = toOperand(other);
  if (!operand)
    return nb::borrow(Py_NotImplemented);
  Operand value(self, operand->where());
  return nb::cast(reflected ? fn(*operand, value) : fn(value, *operand));
}

nb::tuple shapeTuple(const Shape &shape) {
  nb::list dims;
  for (int64_t dim : shape)
    dims.append(dim);
  return nb::tuple(dims);
}

/// `self op= other`, as NumPy's in-place operators on an array (a loaded
/// value is one): `self op other` must keep self's shape, and is converted
/// back to self's dtype where same_kind casting allows (NumPy's ufuncs
/// writing to out=self).
nb::object inPlace(BinaryFn fn, const char *ufunc, const Value &self,
                   nb::handle other) {
  std::optional<Operand> operand = toOperand(other);
  if (!operand)
    return nb::borrow(Py_NotImplemented);
  SourceLoc where = operand->where();
  Value result = fn(Operand(self, where), *operand);
  // (Compared as types: the kernel's code has not read the sizes.)
  if (mlir::cast<mlir::ShapedType>(irOf(result).getType()).getShape() !=
      mlir::cast<mlir::ShapedType>(irOf(self).getType()).getShape())
    raise(PyExc_ValueError,
          where.str() +
              ": error: non-broadcastable output operand with "
              "shape " +
              nb::cast<std::string>(nb::repr(shapeTuple(self.shape()))) +
              " doesn't match the broadcast shape " +
              nb::cast<std::string>(nb::repr(shapeTuple(result.shape()))));
  if (!canCastSameKind(result.dtype(), self.dtype()))
    raise(PyExc_TypeError, where.str() + ": error: Cannot cast ufunc '" +
                               ufunc + "' output from " +
                               std::string(dtypeName(result.dtype())) + " to " +
                               std::string(dtypeName(self.dtype())) +
                               " with casting rule 'same_kind'");
  return nb::cast(cast(Operand(result, where), self.dtype()));
}

Value add(const Operand &a, const Operand &b) { return a + b; }
Value subtract(const Operand &a, const Operand &b) { return a - b; }
Value multiply(const Operand &a, const Operand &b) { return a * b; }
Value divide(const Operand &a, const Operand &b) { return a / b; }
Value remainder(const Operand &a, const Operand &b) { return a % b; }
Value matrixMultiply(const Operand &a, const Operand &b) {
  return matmul(a, b);
}
Value power(const Operand &a, const Operand &b) { return pow(a, b); }
Value powerInPlace(const Operand &a, const Operand &b) {
  return powInPlace(a, b);
}
Value less(const Operand &a, const Operand &b) { return a < b; }
Value lessEqual(const Operand &a, const Operand &b) { return a <= b; }
Value greater(const Operand &a, const Operand &b) { return a > b; }
Value greaterEqual(const Operand &a, const Operand &b) { return a >= b; }
Value equal(const Operand &a, const Operand &b) { return a == b; }
Value notEqual(const Operand &a, const Operand &b) { return a != b; }

/// One axis as NumPy takes it: anything with __index__ (Python and NumPy
/// integers, 0-d integer arrays) but a bool; TypeError otherwise, as NumPy.
int64_t axisOf(nb::handle item) {
  std::string where = pythonLocation().str() + ": error: axis: ";
  if (PyBool_Check(item.ptr()) || PyArray_IsScalar(item.ptr(), Bool))
    raise(PyExc_TypeError, where + "an integer is required, not a bool");
  nb::object index = nb::steal(PyNumber_Index(item.ptr()));
  if (!index.is_valid()) {
    nb::python_error error; // NumPy's own words, at the user's line
    raise(PyExc_TypeError,
          where + nb::cast<std::string>(nb::str(error.value())));
  }
  int overflow = 0;
  long long value = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow)
    raise(PyExc_OverflowError,
          where + "Python int too large to convert to C long");
  return value;
}

/// NumPy's `axis` argument: None (every axis), an integer, or a tuple of
/// them (an empty one reduces nothing); lists are a TypeError, as in NumPy.
Axes axesOf(nb::handle axis) {
  if (axis.is_none())
    return Axes();
  if (!PyTuple_Check(axis.ptr()))
    return Axes(axisOf(axis));
  std::vector<int64_t> axes;
  for (nb::handle item : axis)
    axes.push_back(axisOf(item));
  return Axes(std::move(axes));
}

using ReduceFn = Value (*)(const Operand &, const Axes &, bool);

/// NumPy's `keepdims`: anything with __index__ (True, 1, np.True_).
bool keepdimsOf(nb::handle keepdims) {
  nb::object index = nb::steal(PyNumber_Index(keepdims.ptr()));
  if (!index.is_valid()) {
    PyErr_Clear();
    raise(PyExc_TypeError,
          pythonLocation().str() + ": error: keepdims: '" +
              nb::cast<std::string>(nb::type_name(keepdims.type())) +
              "' object cannot be interpreted as an integer");
  }
  return PyObject_IsTrue(index.ptr()) == 1;
}

template <ReduceFn fn>
Value reduction(const Value &v, nb::handle axis, nb::handle keepdims) {
  return fn(Operand(v, pythonLocation()), axesOf(axis), keepdimsOf(keepdims));
}

/// A module-level function's operand: anything toOperand accepts.
Operand requireOperand(nb::handle object, const char *function) {
  std::optional<Operand> operand = toOperand(object);
  if (!operand)
    raise(PyExc_TypeError,
          pythonLocation().str() + ": error: picokernel." + function +
              ": unsupported operand type " +
              nb::cast<std::string>(nb::type_name(object.type())));
  return *operand;
}

/// A traced value used as a Python number, bool or sequence: an error at
/// the user's line, with what to write instead.
[[noreturn]] void notConcrete(const char *what) {
  std::string_view kind = what;
  std::string hint =
      kind == "a bool"
          ? "Python's `if`, `and`, `or` and `not` on data are not traced: "
            "select with np.where(condition, x, y)"
      : kind == "a float" || kind == "an int"
          ? "Python's math functions and float() or int() take numbers: "
            "on traced arrays use NumPy's (np.exp, np.sqrt, np.floor, ...) "
            "or astype"
          : "a traced array is not a Python sequence: index it with "
            "constants, slice it, or reduce it (.sum(), .max())";
  SourceLoc where = pythonLocation();
  throw nb::type_error(
      ((where.file.empty() ? "" : where.str() + ": error: ") +
       "a traced array has no concrete value while tracing, so it cannot be "
       "used as " +
       what + " (" + hint + ")")
          .c_str());
}

/// Python's arithmetic operators, reflected and in-place ones included.
void bindValueArithmetic(nb::class_<Value> &value) {
  value.def("__add__", binary<add, false>)
      .def("__radd__", binary<add, true>)
      .def("__sub__", binary<subtract, false>)
      .def("__rsub__", binary<subtract, true>)
      .def("__mul__", binary<multiply, false>)
      .def("__rmul__", binary<multiply, true>)
      .def("__truediv__", binary<divide, false>)
      .def("__rtruediv__", binary<divide, true>)
      .def("__floordiv__", binary<pk::floorDivide, false>)
      .def("__rfloordiv__", binary<pk::floorDivide, true>)
      .def("__iadd__",
           [](const Value &v, nb::handle other) {
             return inPlace(add, "add", v, other);
           })
      .def("__isub__",
           [](const Value &v, nb::handle other) {
             return inPlace(subtract, "subtract", v, other);
           })
      .def("__imul__",
           [](const Value &v, nb::handle other) {
             return inPlace(multiply, "multiply", v, other);
           })
      .def("__itruediv__",
           [](const Value &v, nb::handle other) {
             return inPlace(divide, "divide", v, other);
           })
      .def("__ifloordiv__",
           [](const Value &v, nb::handle other) {
             return inPlace(pk::floorDivide, "floor_divide", v, other);
           })
      .def("__imod__",
           [](const Value &v, nb::handle other) {
             return inPlace(remainder, "remainder", v, other);
           })
      .def("__ipow__",
           [](const Value &v, nb::handle other) {
             return inPlace(powerInPlace, "power", v, other);
           })
      .def("__mod__", binary<remainder, false>)
      .def("__rmod__", binary<remainder, true>)
      .def("__matmul__", binary<matrixMultiply, false>)
      .def("__rmatmul__", binary<matrixMultiply, true>)
      .def("__pow__", binary<power, false>)
      .def("__rpow__", binary<power, true>);
}

/// Reductions, comparisons and unary operators.
void bindValueReductionsAndComparisons(nb::class_<Value> &value) {
  value
      .def("sum", reduction<sum>, nb::arg("axis") = nb::none(),
           nb::arg("keepdims").none() = false)
      .def("max", reduction<amax>, nb::arg("axis") = nb::none(),
           nb::arg("keepdims").none() = false)
      .def("min", reduction<amin>, nb::arg("axis") = nb::none(),
           nb::arg("keepdims").none() = false)
      .def("mean", reduction<mean>, nb::arg("axis") = nb::none(),
           nb::arg("keepdims").none() = false)
      .def("__lt__", binary<less, false>)
      .def("__le__", binary<lessEqual, false>)
      .def("__gt__", binary<greater, false>)
      .def("__ge__", binary<greaterEqual, false>)
      .def("__eq__", binary<equal, false>)
      .def("__ne__", binary<notEqual, false>)
      .def("__abs__",
           [](const Value &v) { return abs(Operand(v, pythonLocation())); })
      .def("__neg__",
           [](const Value &v) { return -Operand(v, pythonLocation()); })
      .def("__pos__", [](const Value &v) {
        if (v.dtype() == DType::Bool)
          throw nb::type_error(
              "ufunc 'positive' did not contain a loop with "
              "signature matching types bool (NumPy has no unary + "
              "for booleans)");
        return v;
      });
}

/// The protocols a traced value refuses (bool, int, iteration: no data
/// yet) or answers from its shape (len, indexing, repr).
void bindValueProtocols(nb::class_<Value> &value) {
  value.def("__bool__", [](const Value &) -> bool { notConcrete("a bool"); })
      .def("__float__", [](const Value &) -> double { notConcrete("a float"); })
      .def("__int__", [](const Value &) -> int64_t { notConcrete("an int"); })
      .def("__index__",
           [](const Value &) -> int64_t { notConcrete("an index"); })
      .def("__len__",
           [](const Value &v) -> size_t {
             Shape shape = v.shape();
             if (shape.empty())
               throw nb::type_error("len() of a 0-d traced array");
             return size_t(shape[0]);
           })
      .def("__iter__",
           [](const Value &) -> nb::object { notConcrete("an iterable"); })
      .def(
          "__getitem__",
          [](const Value &v, nb::handle key) {
            std::optional<Index> index = toIndex(key, v.ndim());
            return index ? v[*index] : v;
          },
          nb::arg("key").none())
      .def("__setitem__",
           [](const Value &, nb::handle, nb::handle) {
             throw nb::type_error(
                 "a traced array (a value loaded from a ref, or computed) "
                 "cannot be assigned to: stores go to a ref with one index, "
                 "e.g. o[-3:] = v rather than o[1:][-3:] = v");
           })
      .def("__repr__", [](const Value &v) {
        std::string dims;
        for (int64_t d : v.shape())
          dims += (dims.empty() ? "" : ", ") + std::to_string(d);
        return "<picokernel.Value shape=(" + dims +
               (v.shape().size() == 1 ? "," : "") +
               ") dtype=" + std::string(dtypeName(v.dtype())) + ">";
      });
}

/// where, maximum, minimum and the math functions of the op table.
void bindFunctions(nb::module_ &m) {
  m.def(
      "where",
      [](nb::handle condition, nb::handle a, nb::handle b) {
        return where(requireOperand(condition, "where"),
                     requireOperand(a, "where"), requireOperand(b, "where"));
      },
      nb::arg("condition").none(), nb::arg("x").none(), nb::arg("y").none(),
      "np.where inside a kernel: x where condition, else y.");
  static const MathFunction functions[] = {
#define PK_MATH_FUNCTION(Kind, name, Op, ...) MathFunction::Kind,
#include "picokernel/Dialect/Pk/IR/PkElementwiseOps.def"
  };
  nb::list names;
  for (MathFunction function : functions) {
    const char *name = mathFunctionName(function);
    m.def(
        name,
        [function, name](nb::handle x) {
          return math(function, requireOperand(x, name));
        },
        nb::arg("x").none());
    names.append(name);
  }
  // picokernel.<name> for each (python/picokernel/__init__.py).
  m.attr("MATH_FUNCTIONS") = nb::tuple(names);
  m.def(
      "maximum",
      [](nb::handle a, nb::handle b) {
        return maximum(requireOperand(a, "maximum"),
                       requireOperand(b, "maximum"));
      },
      nb::arg("x1").none(), nb::arg("x2").none(),
      "np.maximum inside a kernel (NaN-propagating).");
  m.def(
      "minimum",
      [](nb::handle a, nb::handle b) {
        return minimum(requireOperand(a, "minimum"),
                       requireOperand(b, "minimum"));
      },
      nb::arg("x1").none(), nb::arg("x2").none(),
      "np.minimum inside a kernel (NaN-propagating).");
}

void bindRef(nb::module_ &m) {
  nb::class_<Ref>(m, "Ref",
                  "A kernel parameter: a reference to a whole array. "
                  "ref[...] loads it and ref[...] = value stores into it; "
                  "ref[1:3], ref[:, ::2], ref[0] read or write a part.")
      .def_prop_ro("name", [](const Ref &r) { return r.name(); })
      .def_prop_ro("shape", [](const Ref &r) { return shapeTuple(r.shape()); })
      .def_prop_ro("dtype", [](const Ref &r) { return toNumPy(r.dtype()); })
      .def(
          "__getitem__",
          [](const Ref &r, nb::handle key) {
            std::optional<Index> index = toIndex(key, r.ndim());
            return index ? r.load(*index) : r.load(pythonLocation());
          },
          nb::arg("key").none())
      .def(
          "__setitem__",
          [](const Ref &r, nb::handle key, nb::handle value) {
            std::optional<Index> index = toIndex(key, r.ndim());
            std::optional<Operand> operand = toOperand(value);
            if (!operand && nb::isinstance<Ref>(value)) {
              SourceLoc where = pythonLocation();
              std::string source = nb::cast<const Ref &>(value).name();
              throw nb::type_error(
                  ((where.file.empty() ? "" : where.str() + ": error: ") +
                   "ref '" + source +
                   "' is a reference to an array, not its value: load it "
                   "with " +
                   source + "[...] (as in " + r.name() + "[...] = " + source +
                   "[...])")
                      .c_str());
            }
            if (!operand)
              throw nb::type_error(
                  ("cannot store a " +
                   nb::cast<std::string>(nb::type_name(value.type())) +
                   " into ref '" + r.name() +
                   "': store a traced value, a number or a NumPy array")
                      .c_str());
            if (index)
              r.store(*index, *operand);
            else
              r.store(*operand);
          },
          nb::arg("key").none(), nb::arg("value").none())
      .def("__repr__",
           [](const Ref &r) { return "<picokernel.Ref " + r.name() + ">"; });
}

} // namespace

void bindTracing(nb::module_ &m) {
  auto value =
      nb::class_<Value>(m, "Value",
                        "An array value inside a traced kernel: the result of "
                        "ref[...] or of an operation on such values.")
          .def_prop_ro("shape",
                       [](const Value &v) { return shapeTuple(v.shape()); })
          .def_prop_ro("dtype",
                       [](const Value &v) { return toNumPy(v.dtype()); })
          .def_prop_ro("ndim", [](const Value &v) { return v.ndim(); })
          .def(
              "astype",
              [](const Value &v, nb::handle dtype) {
                nb::object descr =
                    nb::module_::import_("numpy").attr("dtype")(dtype);
                std::optional<DType> target =
                    fromNumPy((PyArray_Descr *)descr.ptr());
                if (!target)
                  unsupportedDType("dtype " +
                                   numpyName((PyArray_Descr *)descr.ptr()));
                return cast(Operand(v, pythonLocation()), *target);
              },
              nb::arg("dtype"),
              "NumPy's astype: the value converted to dtype.");
  bindValueArithmetic(value);
  bindValueReductionsAndComparisons(value);
  bindValueProtocols(value);
  // NumPy defers to Value's reflected operators (np_array * value).
  value.attr("__array_ufunc__") = nb::none();
  value.attr("__hash__") = nb::none(); // == builds a traced comparison
  bindFunctions(m);
  bindRef(m);
}

} // namespace pk::python
