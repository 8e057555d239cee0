//===- Trace.h - the C++ tracing frontend -----------------------*- C++ -*-===//
//
// A kernel is ordinary C++ over proxy objects. Running it records `pk` IR:
//
//   auto module = pk::trace(
//       "fma",
//       [](pk::Ref a, pk::Ref b, pk::Ref c, pk::Ref o) {
//         o[pk::all] = a[pk::all] * b[pk::all] + c[pk::all];
//       },
//       {{"a", {4}, pk::f32}, {"b", {4}, pk::f32}, {"c", {4}, pk::f32},
//        {"o", {4}, pk::f32}});
//
// `ref[pk::all]` is the seed's `ref[...]`: reading it loads the whole array
// (at that point of the kernel), assigning to it stores. Values follow NumPy:
// broadcasting, type promotion, and C++ number literals that are weakly
// typed like Python scalars (`x_f32 * 2.0` stays float32). Host-side loops
// and ifs simply run while tracing. Every op records the user's source line.
//
// Errors are pk::TraceError exceptions naming the operation and the user's
// file:line.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_FRONTEND_TRACE_H
#define PICOKERNEL_FRONTEND_TRACE_H

#include "picokernel/Support/DType.h"
#include "picokernel/Support/Module.h"

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace pk {

/// Where in the user's program something was written.
struct SourceLoc {
  std::string file;
  unsigned line = 0;
  unsigned column = 0;

  static SourceLoc
  current(std::source_location where = std::source_location::current()) {
    return {where.file_name(), unsigned(where.line()),
            unsigned(where.column())};
  }
  std::string str() const;
};

/// A trace-time error: the message names the operation, and where() is the
/// user's line that caused it (what() starts with "file:line:column: ").
class TraceError : public std::runtime_error {
public:
  /// What kind of rule was broken, as Python would classify it: shapes and
  /// values (ValueError), types and operations (TypeError), a number that
  /// does not fit (OverflowError), a position out of bounds (IndexError),
  /// an axis out of bounds (NumPy's AxisError, both of the last two).
  enum class Category { Value, Type, Overflow, Index, Axis };

  TraceError(const std::string &message, SourceLoc where,
             Category category = Category::Value);
  const SourceLoc &where() const { return location; }
  /// The message without the location prefix.
  const std::string &message() const { return text; }
  Category category() const { return kind; }

private:
  SourceLoc location;
  std::string text;
  Category kind;
};

/// A marker for errors of a kernel's code that end the call whatever the
/// sizes (Python's KeyboardInterrupt, SystemExit): a trace for other sizes
/// that raises one is not a kernel that fails for those sizes.
class TraceAbort {
public:
  virtual ~TraceAbort();
};

/// One kernel parameter: its name (as the printed IR shows it; empty means
/// "argN"), shape and element type. `aliasOf` names an earlier parameter
/// that is the same array (as when a caller passes the output as an input
/// too): both refs then read and write one kernel argument.
struct ArgSpec {
  std::string name;
  Shape shape;
  DType dtype;
  int aliasOf = -1;
};
using Signature = std::vector<ArgSpec>;

/// Where a trace's IR lives. Shared: the process's one context, where types
/// and constants are made once for every kernel (and what a trace adds to
/// it stays for the process's life). Own: a context of the module's own,
/// freed with it (for modules made once, to print or lower; making one
/// costs about 0.1 ms, lowering in it a few ms more, as the compiler's
/// dialects load into it). Either way, values of an ended trace only say
/// that it ended.
enum class TraceContext { Shared, Own };

namespace detail {
class TraceState;
struct ValueAccess;
struct StartedTrace;
} // namespace detail

struct Index;

/// A traced array value: the result of a load or of an operation.
class Value {
public:
  Value() = default;
  /// The sizes (reading them makes the kernel compile for static sizes:
  /// its code may depend on them).
  Shape
  shape(std::source_location where = std::source_location::current()) const;
  /// The number of dimensions (part of every compiled kernel's key).
  size_t
  ndim(std::source_location where = std::source_location::current()) const;
  DType
  dtype(std::source_location where = std::source_location::current()) const;
  /// NumPy's basic indexing with constants (`x[1:3]`, `x[2]`): a new value.
  Value operator[](const Index &index) const;

protected:
  friend class detail::TraceState;
  friend struct detail::ValueAccess;
  Value(std::shared_ptr<detail::TraceState> state, const void *ir)
      : state(std::move(state)), ir(ir) {}

  std::shared_ptr<detail::TraceState> state;
  /// The IR value (Frontend/TraceIR.h's irOf), opaque here.
  const void *ir = nullptr;
};

/// An operand of a traced operation: a traced value or a C++ number, with
/// the user's source location (captured where the operand is written). C++
/// numbers are weakly typed, like Python scalars in NumPy: they take the
/// other operand's element type (an integer array times a floating-point
/// number computes in float64, as in NumPy).
class Operand {
public:
  enum class Kind { Value, Bool, Integer, Float, Array };

  Operand(const Value &value,
          std::source_location where = std::source_location::current())
      : Operand(value, SourceLoc::current(where)) {}
  Operand(const Value &value, SourceLoc where)
      : kind(Kind::Value), value(value), location(std::move(where)) {}

  template <typename T>
    requires std::is_arithmetic_v<T>
  Operand(T number,
          std::source_location where = std::source_location::current())
      : location(SourceLoc::current(where)) {
    if constexpr (std::is_same_v<T, bool>) {
      kind = Kind::Bool;
      intValue = number;
    } else if constexpr (std::is_integral_v<T>) {
      kind = Kind::Integer;
      if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t))
        if (number > T(INT64_MAX)) {
          bigInteger = unsignedBig = true;
          floatValue = double(number);
          intValue = int64_t(uint64_t(number));
          return;
        }
      intValue = int64_t(number);
    } else {
      kind = Kind::Float;
      floatValue = double(number);
    }
  }

  /// Numbers with an explicit location (for language bindings).
  static Operand fromBool(bool number, SourceLoc where);
  static Operand fromInteger(int64_t number, SourceLoc where);
  static Operand fromFloat(double number, SourceLoc where);
  /// An integer beyond int64 (a Python int of 2^63 or more), held as the
  /// nearest double. As in NumPy, it converts to a float dtype, compares
  /// with integer arrays by its sign (`int8_array < 2**64` is all true),
  /// and is an OverflowError wherever it would be an integer.
  static Operand fromBigInteger(double number, SourceLoc where);
  /// A big integer in [2^63, 2^64), which keeps its exact value too.
  static Operand fromUnsignedBigInteger(uint64_t number, SourceLoc where);
  /// A constant array (a NumPy array captured by a kernel): `bytes` holds
  /// its elements in row-major order, one byte per bool. Its dtype is
  /// strong, like an array's.
  static Operand fromArray(DType dtype, Shape shape, std::vector<uint8_t> bytes,
                           SourceLoc where);

  struct ConstantArray {
    DType dtype;
    Shape shape;
    std::vector<uint8_t> bytes;
  };

  Kind getKind() const { return kind; }
  /// The element type of a number made with pk::typed (none: weakly typed).
  std::optional<DType> numberType() const { return fixedType; }
  const Value &getValue() const { return value; }
  /// The integer; check isBigInteger() first (a big one has getFloat()).
  int64_t getInteger() const { return intValue; }
  bool isBigInteger() const { return bigInteger; }
  /// A big integer below 2^64 converted as C converts it to int64 (its
  /// low 64 bits), as np.where converts Python integers; none for larger
  /// magnitudes, which NumPy cannot convert at all (OverflowError).
  std::optional<int64_t> wrappedToInt64() const {
    if (bigInteger && unsignedBig)
      return intValue;
    return std::nullopt;
  }
  double getFloat() const { return floatValue; }
  const SourceLoc &where() const { return location; }
  const ConstantArray &getArray() const { return *array; }

private:
  Operand(Kind kind, SourceLoc where)
      : kind(kind), location(std::move(where)) {}
  friend Operand typed(const Operand &number, DType dtype);

  Kind kind = Kind::Value;
  Value value;
  int64_t intValue = 0;
  double floatValue = 0;
  bool bigInteger = false;
  bool unsignedBig = false; // a big integer whose low 64 bits are intValue
  std::optional<DType> fixedType;
  std::shared_ptr<const ConstantArray> array;
  SourceLoc location;
};

/// The whole-array index, the seed's `...`: `ref[pk::all]`. In a list of
/// indices it is a whole dimension, Python's `:`.
struct All {};
inline constexpr All all{};

/// Python's `start:stop:step` in one dimension: negative positions count
/// from the end, positions past either end are clamped, and a missing start
/// or stop is the end the step walks from or to.
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};
/// A missing slice bound: `pk::slice(pk::none, 2)` is Python's `:2`.
inline constexpr std::nullopt_t none = std::nullopt;
inline Slice slice(std::optional<int64_t> start, std::optional<int64_t> stop,
                   int64_t step = 1) {
  return Slice{start, stop, step};
}

/// One dimension of an index: an integer (one position; the dimension is
/// dropped, as in NumPy), a slice, or pk::all.
class IndexItem {
public:
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  IndexItem(T position) : position(int64_t(position)) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t))
      if (position > T(INT64_MAX))
        this->position = INT64_MAX; // out of bounds for every array
  }
  IndexItem(Slice range) : range(range) {}
  IndexItem(All) : range(Slice{}) {}

  bool isPosition() const { return !range; }
  int64_t getPosition() const { return position; }
  const Slice &getSlice() const { return *range; }

private:
  int64_t position = 0;
  std::optional<Slice> range;
};

/// NumPy's basic indexing with constants, checked when traced:
/// `ref[{pk::all, pk::slice(1, 3)}]` is `ref[:, 1:3]`, `ref[2]` is `ref[2]`,
/// `ref[pk::slice(std::nullopt, std::nullopt, -1)]` is `ref[::-1]`.
/// Dimensions not indexed are taken whole.
struct Index {
  Index(std::initializer_list<IndexItem> items,
        std::source_location where = std::source_location::current())
      : items(items), where(SourceLoc::current(where)) {}
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  Index(T position,
        std::source_location where = std::source_location::current())
      : items{IndexItem(position)}, where(SourceLoc::current(where)) {}
  Index(Slice range,
        std::source_location where = std::source_location::current())
      : items{IndexItem(range)}, where(SourceLoc::current(where)) {}
  /// For language bindings.
  Index(std::vector<IndexItem> items, SourceLoc where)
      : items(std::move(items)), where(std::move(where)) {}

  std::vector<IndexItem> items;
  SourceLoc where;
};

/// `ref[pk::all]` or `ref[index]`: the loaded value of the array or of a
/// slice of it, which can also be assigned to (a store into that part).
/// Only the expression itself can be assigned; a named copy
/// (`auto x = ref[pk::all]`) is a plain value.
class RefElement : public Value {
public:
  RefElement(const RefElement &) = default;

  /// `ref[pk::all] = value` (also when `value` is another `ref[pk::all]`:
  /// the deleted lvalue overload leaves this as the only assignment).
  void operator=(const Operand &stored) &&;
  RefElement &operator=(const RefElement &) & = delete;

  void operator+=(const Operand &rhs) &&;
  void operator-=(const Operand &rhs) &&;
  void operator*=(const Operand &rhs) &&;
  void operator/=(const Operand &rhs) &&;
  void operator%=(const Operand &rhs) &&;

private:
  friend class Ref;
  RefElement(Value loaded, std::shared_ptr<detail::TraceState> owner,
             unsigned ref, std::shared_ptr<const Index> part)
      : Value(std::move(loaded)), owner(std::move(owner)), ref(ref),
        part(std::move(part)) {}
  void store(const Operand &value) const;

  std::shared_ptr<detail::TraceState> owner;
  unsigned ref;
  /// The slice assigned to; null for the whole array.
  std::shared_ptr<const Index> part;
};

/// `pk::all` together with the user's source location.
struct WholeArray {
  WholeArray(All, std::source_location where = std::source_location::current())
      : where(SourceLoc::current(where)) {}
  SourceLoc where;
};

/// A kernel parameter: a reference to a whole array.
class Ref {
public:
  /// Loads the whole array now; assigning to the result stores.
  RefElement operator[](const WholeArray &index) const;
  /// Loads a slice now; assigning to the result stores into that slice.
  RefElement operator[](const Index &index) const;
  Value
  load(std::source_location where = std::source_location::current()) const;
  Value load(const SourceLoc &where) const;
  Value load(const Index &index) const;
  void store(const Operand &value) const;
  /// `ref[index] = value`: the value is broadcast to the slice's shape.
  void store(const Index &index, const Operand &value) const;

  const std::string &name() const;
  /// The sizes (reading them makes the kernel compile for static sizes).
  Shape shape() const;
  size_t ndim() const;
  DType dtype() const;

private:
  friend class Tracer;
  Ref(std::shared_ptr<detail::TraceState> state, unsigned index)
      : state(std::move(state)), index(index) {}

  std::shared_ptr<detail::TraceState> state;
  unsigned index;
};

Value operator+(const Operand &lhs, const Operand &rhs);
Value operator-(const Operand &lhs, const Operand &rhs);
Value operator*(const Operand &lhs, const Operand &rhs);
/// True division: integer operands compute in float64, as NumPy's `/`.
Value operator/(const Operand &lhs, const Operand &rhs);
/// NumPy's `%` (np.remainder): the result has the divisor's sign; integer
/// `x % 0` is 0.
Value operator%(const Operand &lhs, const Operand &rhs);
/// NumPy's `//` (np.floor_divide): rounds towards negative infinity; integer
/// `x // 0` is 0.
Value floorDivide(const Operand &lhs, const Operand &rhs);
Value operator-(const Operand &operand);

/// NumPy's comparisons: boolean arrays (after promotion and broadcasting;
/// comparisons with NaN are false, except !=).
Value operator<(const Operand &lhs, const Operand &rhs);
Value operator<=(const Operand &lhs, const Operand &rhs);
Value operator>(const Operand &lhs, const Operand &rhs);
Value operator>=(const Operand &lhs, const Operand &rhs);
Value operator==(const Operand &lhs, const Operand &rhs);
Value operator!=(const Operand &lhs, const Operand &rhs);

/// np.maximum / np.minimum (NaN-propagating), np.abs.
Value maximum(const Operand &lhs, const Operand &rhs);
Value minimum(const Operand &lhs, const Operand &rhs);
Value abs(const Operand &value);
/// np.where(condition, a, b): a data-dependent choice, element by element
/// (a non-boolean condition counts as "nonzero").
Value where(const Operand &condition, const Operand &a, const Operand &b);

/// NumPy's floating-point functions: integer and boolean arrays compute in
/// the smallest float that holds them (int8 in float16, int32 in float64).
/// The functions are those of PkElementwiseOps.def: exp, log, log1p, expm1,
/// sqrt, rsqrt, tanh, sin, cos, floor, ceil, sigmoid, erf.
enum class MathFunction {
#define PK_MATH_FUNCTION(Kind, name, Op, ...) Kind,
#include "picokernel/Dialect/Pk/IR/PkElementwiseOps.def"
};
/// NumPy's name of `function` ("exp").
const char *mathFunctionName(MathFunction function);
Value math(MathFunction function, const Operand &value);
#define PK_MATH_FUNCTION(Kind, name, Op, ...)                                  \
  inline Value name(const Operand &x) { return math(MathFunction::Kind, x); }
#include "picokernel/Dialect/Pk/IR/PkElementwiseOps.def"
/// NumPy's `**`. Integer results need a constant exponent >= 0 (computed by
/// repeated squaring, wrapping); constant exponents 2, 0.5, -1, 1 and 0 take
/// NumPy's fast paths (square, sqrt, reciprocal, copy, ones), and 3 and 4
/// multiply (as jax.numpy and numexpr do; within 2 ulp of pow). As NumPy's
/// float32/float64 loop, a one-element exponent repeated across the result
/// takes sqrt where it holds 0.5 (nan for -inf, -0.0 for -0.0).
Value pow(const Operand &base, const Operand &exponent);
/// NumPy's `base **= exponent` before the result converts back to base's
/// dtype: pow, except that a one-element exponent always counts as repeated
/// (the output is the base, so NumPy never takes its trivial loop).
Value powInPlace(const Operand &base, const Operand &exponent);

/// The axes of a reduction, negative ones counting from the end: every
/// axis by default (`{}` too), one (`-1`) or a list (`{0, 2}`); an empty
/// list (`pk::Axes::none()`, NumPy's `axis=()`) reduces nothing.
class Axes {
public:
  Axes() = default;
  Axes(int64_t axis) : list(std::vector<int64_t>{axis}), integer(true) {}
  Axes(std::initializer_list<int64_t> axes) : list(axes) {}
  Axes(std::vector<int64_t> axes) : list(std::move(axes)) {}
  static Axes none() { return Axes(std::vector<int64_t>{}); }

  /// The listed axes; nothing for every axis.
  const std::optional<std::vector<int64_t>> &get() const { return list; }
  /// Whether the axis was given as one integer (NumPy's `axis=0`, not
  /// `axis=(0,)`): sum, max and min of a 0-d array take 0 and -1 then.
  bool isInteger() const { return integer; }

private:
  std::optional<std::vector<int64_t>> list;
  bool integer = false;
};

/// NumPy's reductions over `axes` (see Axes), keeping
/// reduced dimensions with size 1 if `keepdims`. As in NumPy, sum
/// accumulates booleans and integers in int64, mean returns float64 for
/// them, float16 accumulates in float32, and max/min of an empty axis is a
/// ValueError.
Value sum(const Operand &value, const Axes &axes = {}, bool keepdims = false);
Value amax(const Operand &value, const Axes &axes = {}, bool keepdims = false);
Value amin(const Operand &value, const Axes &axes = {}, bool keepdims = false);
Value mean(const Operand &value, const Axes &axes = {}, bool keepdims = false);

/// NumPy's `lhs @ rhs` (1-D, 2-D and batched, batch dimensions broadcast).
Value matmul(const Operand &lhs, const Operand &rhs);
/// NumPy's `value.astype(dtype)`.
Value cast(const Operand &value, DType dtype);
/// A number with a fixed element type, like a NumPy scalar
/// (`np.float64(2.0)`): unlike a plain C++ number it takes part in type
/// promotion, so `x_f32 * pk::typed(2.0, pk::f64)` computes in float64.
Operand typed(const Operand &number, DType dtype);

/// Records kernels. Most code calls pk::trace(); language bindings drive a
/// Tracer directly, one operation at a time.
class Tracer {
public:
  Tracer(std::string name, const Signature &signature, SourceLoc where = {},
         TraceContext context = TraceContext::Shared);
  /// A trace begun by Frontend/TraceIR.h's startTrace (in a given MLIR
  /// context, for picokernel's own layers).
  Tracer(detail::StartedTrace started, SourceLoc where);
  ~Tracer();
  Tracer(const Tracer &) = delete;
  Tracer &operator=(const Tracer &) = delete;

  const std::vector<Ref> &refs() const { return parameters; }
  /// Ends the trace: checks that the kernel stores, removes unused values,
  /// verifies the kernel and hands over the module. Values and refs of this
  /// trace cannot be used afterwards. `forGeneralizing` keeps the indices
  /// recorded for generalizeSizes (Generalize.h) on the slices.
  Module finish(bool forGeneralizing = false);
  /// Ends the trace without a result (the kernel raised); idempotent.
  void abandon();
  /// Whether the kernel's code has read a size (Value::shape, Ref::shape)
  /// or went on after a trace error (a try/except around a shape check):
  /// either way its trace may depend on the sizes beyond what the types say.
  bool readSizes() const;

private:
  std::shared_ptr<detail::TraceState> state;
  std::vector<Ref> parameters;
  SourceLoc location;
  /// detail::traceErrorsReported() when the trace began.
  uint64_t errorsAtStart;
};

namespace detail {
/// Errors reported to kernel code on this thread so far: every TraceError,
/// and what language bindings report themselves (noteTraceError).
uint64_t traceErrorsReported();
void noteTraceError();
} // namespace detail

namespace detail {
template <typename Fn, size_t... I>
constexpr bool invocableWithRefs(std::index_sequence<I...>) {
  return std::is_invocable_v<Fn, decltype((void)I, std::declval<Ref>())...>;
}

/// How many refs `Fn` takes (up to 32), or -1 if it takes a std::vector.
template <typename Fn, size_t N = 0> constexpr int refArity() {
  if constexpr (std::is_invocable_v<Fn, const std::vector<Ref> &>)
    return -1;
  else if constexpr (N > 32)
    static_assert(N <= 32, "a kernel takes pk::Ref parameters (at most 32) or "
                           "one const std::vector<pk::Ref>&");
  else if constexpr (invocableWithRefs<Fn>(std::make_index_sequence<N>()))
    return int(N);
  else
    return refArity<Fn, N + 1>();
  return 0;
}

template <typename Fn, size_t... I>
void callWithRefs(Fn &fn, const std::vector<Ref> &refs,
                  std::index_sequence<I...>) {
  fn(refs[I]...);
}

[[noreturn]] void throwArityMismatch(const std::string &name, size_t takes,
                                     size_t given, const SourceLoc &where);
} // namespace detail

/// Runs `kernel` on proxy refs described by `signature` and returns the
/// recorded module (one pk.kernel named `name`) in the context `context`
/// names. `kernel` takes one pk::Ref per signature entry, or one
/// `const std::vector<pk::Ref>&`.
template <typename Fn>
Module trace(TraceContext context, const std::string &name, Fn &&kernel,
             const Signature &signature,
             std::source_location where = std::source_location::current()) {
  constexpr int arity = detail::refArity<std::remove_reference_t<Fn> &>();
  SourceLoc location = SourceLoc::current(where);
  if constexpr (arity >= 0)
    if (signature.size() != size_t(arity))
      detail::throwArityMismatch(name, arity, signature.size(), location);
  Tracer tracer(name, signature, location, context);
  try {
    if constexpr (arity >= 0)
      detail::callWithRefs(kernel, tracer.refs(),
                           std::make_index_sequence<size_t(arity)>());
    else
      kernel(tracer.refs());
  } catch (...) {
    tracer.abandon();
    throw;
  }
  return tracer.finish();
}

/// The same in the process's shared context.
template <typename Fn>
Module trace(const std::string &name, Fn &&kernel, const Signature &signature,
             std::source_location where = std::source_location::current()) {
  return trace(TraceContext::Shared, name, std::forward<Fn>(kernel), signature,
               where);
}

} // namespace pk

#endif // PICOKERNEL_FRONTEND_TRACE_H
