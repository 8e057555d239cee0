//===- FuzzTracedKernels.cpp - random kernels against a reference ---------===//
//
// libFuzzer target: the input bytes are a small straight-line program over
// arrays of one dtype (bool, int8, int32, int64, float16, float32 or
// float64) with NumPy-style broadcasting: elementwise arithmetic,
// maximum/minimum, abs, negation, a comparison feeding where, integer // and
// %, scalar operands, reversal of the first or last axis, a one-row slice,
// max/min reductions over the last axis (kept), and a final store into the
// whole output, its rows reversed or one row. The program is traced
// through the C++ API, compiled by the JIT and run; a scalar interpreter
// computes the same program with NumPy's rules (float16 rounded after every
// operation, booleans as logical or/and). Any difference (float results
// compare by value: NaN equals NaN and -0.0 equals 0.0, whose sign NumPy's
// max/min leave to the instruction set) aborts, and so do crashes and
// sanitizer reports.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Kernel/Kernel.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace {

/// Reads bytes from the input, then zeros.
class Bytes {
public:
  Bytes(const uint8_t *data, size_t size) : data(data), size(size) {}
  uint8_t next() { return position < size ? data[position++] : 0; }
  bool empty() const { return position >= size; }

private:
  const uint8_t *data;
  size_t size, position = 0;
};

enum class Op : uint8_t {
  Add,
  Sub,
  Mul,
  DivOrFloorDiv,
  Max,
  Min,
  Neg,
  Abs,
  LessWhere,
  Reverse,
  RemOrSub,
  ScalarMul,
  ReverseFirst, ///< x[::-1]
  SliceFirst,   ///< x[k:k+1] (one row; one element of a vector)
  ReduceMax,    ///< x.max(axis=-1, keepdims=True)
  ReduceMin,
  Count
};

/// NumPy refuses `-` and unary minus on booleans, and `/`, `%` and `*` by
/// a Python integer change their dtype: boolean programs use these ops
/// instead.
Op forBool(Op op) {
  switch (op) {
  case Op::Sub:
  case Op::Neg:
  case Op::DivOrFloorDiv:
    return Op::Max;
  case Op::RemOrSub:
  case Op::ScalarMul:
    return Op::Min;
  default:
    return op;
  }
}

struct Step {
  Op op;
  unsigned a, b, c; ///< operand indices into the values so far
  int64_t scalar;
};

struct Program {
  int64_t rows, cols;
  std::vector<pk::Shape> inputShapes;
  std::vector<Step> steps;
  unsigned store; ///< 0: o[...] = v; 1: o[::-1] = v; 2: o[row] = v
  int64_t row;
};

pk::Shape broadcast(const pk::Shape &x, const pk::Shape &y) {
  pk::Shape result(std::max(x.size(), y.size()), 1);
  for (size_t i = 0; i < result.size(); ++i) {
    int64_t dx = i < x.size() ? x[x.size() - 1 - i] : 1;
    int64_t dy = i < y.size() ? y[y.size() - 1 - i] : 1;
    result[result.size() - 1 - i] = std::max(dx, dy);
  }
  return result;
}

Program decode(Bytes &bytes) {
  Program program;
  program.rows = 1 + bytes.next() % 5;
  program.cols = 1 + bytes.next() % 6;
  // Shapes that broadcast to (rows, cols).
  const pk::Shape shapes[] = {{program.rows, program.cols},
                              {program.cols},
                              {1, program.cols},
                              {program.rows, 1},
                              {}};
  unsigned inputs = 1 + bytes.next() % 3;
  for (unsigned i = 0; i < inputs; ++i)
    program.inputShapes.push_back(shapes[bytes.next() % 5]);
  unsigned values = inputs, steps = bytes.next() % 13;
  for (unsigned i = 0; i < steps; ++i, ++values) {
    Step step;
    step.op = Op(bytes.next() % uint8_t(Op::Count));
    step.a = bytes.next() % values;
    step.b = bytes.next() % values;
    step.c = bytes.next() % values;
    step.scalar = int64_t(bytes.next() % 7) - 3;
    program.steps.push_back(step);
  }
  program.store = bytes.next() % 3;
  program.row = bytes.next() % program.rows;
  return program;
}

//===----------------------------------------------------------------------===//
// The reference: NumPy's rules on plain arrays
//===----------------------------------------------------------------------===//

/// How elements are stored: one byte per bool, as the kernels read them
/// (std::vector<bool> packs bits).
template <typename T>
using Storage = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

template <typename T> struct Array {
  pk::Shape shape;
  std::vector<Storage<T>> data;

  /// The element that broadcasting to `to` puts at row-major index `flat`.
  T at(const pk::Shape &to, int64_t flat) const {
    int64_t index = 0, stride = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      size_t fromEnd = shape.size() - 1 - i;
      int64_t outer = 1;
      for (size_t d = to.size() - i; d < to.size(); ++d)
        outer *= to[d];
      int64_t coordinate = (flat / outer) % to[to.size() - 1 - i];
      if (shape[fromEnd] != 1)
        index += coordinate * stride;
      stride *= shape[fromEnd];
    }
    return T(data[size_t(index)]);
  }
};

int64_t elements(const pk::Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

template <typename T>
constexpr bool isFloat =
    std::is_same_v<T, float> || std::is_same_v<T, double> ||
    std::is_same_v<T, _Float16>;

template <typename T> bool isNaN(T x) { return x != x; }

template <typename T> T floorDivide(T a, T b) {
  if (b == 0)
    return 0;
  if (a == std::numeric_limits<T>::min() && b == -1)
    return a;
  T q = T(a / b);
  return (a % b != 0 && ((a < 0) != (b < 0))) ? T(q - 1) : q;
}

template <typename T> T remainder(T a, T b) {
  if (b == 0 || (a == std::numeric_limits<T>::min() && b == -1))
    return 0;
  T r = T(a % b);
  return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
}

/// Integer arithmetic wraps (computed unsigned, as NumPy's does).
template <typename T> T wrapped(Op op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
  case Op::Add:
    return T(U(U(a) + U(b)));
  case Op::Sub:
    return T(U(U(a) - U(b)));
  case Op::Mul:
    return T(U(U(a) * U(b)));
  default:
    std::abort();
  }
}

template <typename T> T binary(Op op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    // bool + bool is or, bool * bool and; max and min likewise.
    return op == Op::Add || op == Op::Max ? (a || b) : (a && b);
  } else if constexpr (std::is_integral_v<T>) {
    switch (op) {
    case Op::DivOrFloorDiv:
      return floorDivide(a, b);
    case Op::RemOrSub:
      return remainder(a, b);
    case Op::Max:
      return a > b ? a : b;
    case Op::Min:
      return a < b ? a : b;
    default:
      return wrapped(op, a, b);
    }
  } else {
    switch (op) {
    case Op::Add:
      return T(a + b);
    case Op::Sub:
    case Op::RemOrSub:
      return T(a - b);
    case Op::Mul:
      return T(a * b);
    case Op::DivOrFloorDiv:
      return T(a / b);
    case Op::Max:
      return isNaN(a) || isNaN(b) ? T(NAN) : a > b ? a : b;
    case Op::Min:
      return isNaN(a) || isNaN(b) ? T(NAN) : a < b ? a : b;
    default:
      std::abort();
    }
  }
}

template <typename T> T negate(T x) {
  if constexpr (isFloat<T>)
    return T(-x);
  else if constexpr (std::is_same_v<T, bool>)
    std::abort(); // forBool maps negation away
  else
    return T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(x));
}

template <typename T> T absolute(T x) {
  if constexpr (std::is_same_v<T, bool>)
    return x;
  else if constexpr (isFloat<T>)
    return T(std::fabs(double(x))); // exact in every float width
  else
    return x < 0 ? negate(x) : x;
}

template <typename T> T scaled(T x, int64_t scalar) {
  if constexpr (isFloat<T>)
    return T(x * T(scalar));
  else if constexpr (std::is_same_v<T, bool>)
    std::abort(); // forBool maps scaling away
  else
    return wrapped(Op::Mul, x, T(scalar));
}

/// The shape an op gives (a, b and c's shapes broadcast for most).
pk::Shape resultShape(const Step &step, const pk::Shape &a, const pk::Shape &b,
                      const pk::Shape &c) {
  pk::Shape shape = a;
  switch (step.op) {
  case Op::Neg:
  case Op::Abs:
  case Op::ScalarMul:
  case Op::Reverse:
  case Op::ReverseFirst:
    return a;
  case Op::SliceFirst:
    if (!shape.empty())
      shape.front() = 1;
    return shape;
  case Op::ReduceMax:
  case Op::ReduceMin:
    if (!shape.empty())
      shape.back() = 1;
    return shape;
  case Op::LessWhere:
    return broadcast(broadcast(a, b), c);
  default:
    return broadcast(a, b);
  }
}

/// Row-major coordinates of `flat` in `shape`, and back.
std::vector<int64_t> coordinates(const pk::Shape &shape, int64_t flat) {
  std::vector<int64_t> result(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    result[d] = flat % shape[d];
    flat /= shape[d];
  }
  return result;
}

int64_t flatIndex(const pk::Shape &shape, const std::vector<int64_t> &at) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + at[d];
  return flat;
}

/// The row SliceFirst takes: the step's scalar, counted from the end when
/// negative.
int64_t sliceRow(const Step &step, const pk::Shape &shape) {
  int64_t n = shape.front();
  return ((step.scalar % n) + n) % n;
}

/// Element `i` of the result of ops that move elements (reversals, slices)
/// or reduce them.
template <typename T>
T rearranged(const Step &step, const Array<T> &a, const pk::Shape &shape,
             int64_t i) {
  if (a.shape.empty())
    return T(a.data[0]);
  std::vector<int64_t> at = coordinates(shape, i);
  if (step.op == Op::Reverse)
    at.back() = a.shape.back() - 1 - at.back();
  else if (step.op == Op::ReverseFirst)
    at.front() = a.shape.front() - 1 - at.front();
  else if (step.op == Op::SliceFirst)
    at.front() = sliceRow(step, a.shape);
  if (step.op != Op::ReduceMax && step.op != Op::ReduceMin)
    return T(a.data[size_t(flatIndex(a.shape, at))]);
  Op combine = step.op == Op::ReduceMax ? Op::Max : Op::Min;
  T result{};
  for (int64_t k = 0; k < a.shape.back(); ++k) {
    at.back() = k;
    T x = T(a.data[size_t(flatIndex(a.shape, at))]);
    result = k == 0 ? x : binary(combine, result, x);
  }
  return result;
}

template <typename T>
T element(const Step &step, const Array<T> &a, const Array<T> &b,
          const Array<T> &c, const pk::Shape &shape, int64_t i) {
  switch (step.op) {
  case Op::Reverse:
  case Op::ReverseFirst:
  case Op::SliceFirst:
  case Op::ReduceMax:
  case Op::ReduceMin:
    return rearranged(step, a, shape, i);
  case Op::Neg:
    return negate(a.at(shape, i));
  case Op::Abs:
    return absolute(a.at(shape, i));
  case Op::ScalarMul:
    return scaled(a.at(shape, i), step.scalar);
  case Op::LessWhere:
    return a.at(shape, i) < b.at(shape, i) ? a.at(shape, i) : c.at(shape, i);
  default:
    return binary(step.op, a.at(shape, i), b.at(shape, i));
  }
}

template <typename T>
Array<T> reference(const Program &program, std::vector<Array<T>> values) {
  for (const Step &step : program.steps) {
    const Array<T> &a = values[step.a], &b = values[step.b],
                   &c = values[step.c];
    Array<T> result;
    result.shape = resultShape(step, a.shape, b.shape, c.shape);
    int64_t n = elements(result.shape);
    for (int64_t i = 0; i < n; ++i)
      result.data.push_back(element(step, a, b, c, result.shape, i));
    values.push_back(std::move(result));
  }
  return values.back();
}

//===----------------------------------------------------------------------===//
// The same program, traced
//===----------------------------------------------------------------------===//

pk::Value traced(const Step &step, const std::vector<pk::Value> &values,
                 bool isFloat) {
  const pk::Value &a = values[step.a], &b = values[step.b], &c = values[step.c];
  switch (step.op) {
  case Op::Add:
    return a + b;
  case Op::Sub:
    return a - b;
  case Op::Mul:
    return a * b;
  case Op::DivOrFloorDiv:
    return isFloat ? a / b : pk::floorDivide(a, b);
  case Op::RemOrSub:
    return isFloat ? a - b : a % b;
  case Op::Max:
    return pk::maximum(a, b);
  case Op::Min:
    return pk::minimum(a, b);
  case Op::Neg:
    return -a;
  case Op::Abs:
    return pk::abs(a);
  case Op::LessWhere:
    return pk::where(a < b, a, c);
  case Op::ScalarMul:
    return a * step.scalar;
  case Op::Reverse: {
    size_t rank = a.shape().size();
    if (rank == 0)
      return a;
    std::vector<pk::IndexItem> items(rank - 1, pk::all);
    items.push_back(pk::slice(pk::none, pk::none, -1));
    return a[pk::Index(items, {})];
  }
  case Op::ReverseFirst:
    if (a.shape().empty())
      return a;
    return a[pk::slice(pk::none, pk::none, -1)];
  case Op::SliceFirst: {
    if (a.shape().empty())
      return a;
    int64_t row = sliceRow(step, a.shape());
    return a[pk::slice(row, row + 1)];
  }
  case Op::ReduceMax:
    return a.shape().empty() ? a : pk::amax(a, -1, /*keepdims=*/true);
  case Op::ReduceMin:
    return a.shape().empty() ? a : pk::amin(a, -1, /*keepdims=*/true);
  case Op::Count:
    break;
  }
  std::abort();
}

template <typename T> pk::DType dtypeOf() {
  if constexpr (std::is_same_v<T, bool>)
    return pk::DType::Bool;
  else if constexpr (std::is_same_v<T, int8_t>)
    return pk::i8;
  else if constexpr (std::is_same_v<T, int32_t>)
    return pk::i32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return pk::i64;
  else if constexpr (std::is_same_v<T, _Float16>)
    return pk::f16;
  else if constexpr (std::is_same_v<T, float>)
    return pk::f32;
  else
    return pk::f64;
}

template <typename T> bool same(T x, T y) {
  return x == y || (isNaN(x) && isNaN(y));
}

/// An input element from one byte: small integers and, for floats, signed
/// zeros, halves, infinities, NaN and extremes; the extremes of integers.
template <typename T> T inputValue(uint8_t byte) {
  if constexpr (std::is_same_v<T, bool>) {
    return byte % 2;
  } else if constexpr (isFloat<T>) {
    const double special[] = {-0.0, 0.5,     INFINITY, -INFINITY,
                              NAN,  65504.0, 6e-8,     1e30};
    return byte >= 240 ? T(special[byte % 8]) : T(int(byte % 9) - 4);
  } else {
    if (byte >= 250)
      return byte % 2 ? std::numeric_limits<T>::min()
                      : std::numeric_limits<T>::max();
    return T(int(byte % 9) - 4);
  }
}

template <typename T> void check(const Program &program, Bytes &bytes) {
  std::vector<Array<T>> inputs;
  for (const pk::Shape &shape : program.inputShapes) {
    Array<T> array{shape, {}};
    for (int64_t i = 0; i < elements(shape); ++i)
      array.data.push_back(inputValue<T>(bytes.next()));
    inputs.push_back(std::move(array));
  }

  pk::Kernel kernel("fuzz", [&](const std::vector<pk::Ref> &refs) {
    std::vector<pk::Value> values;
    for (size_t i = 0; i + 1 < refs.size(); ++i)
      values.push_back(refs[i][pk::all]);
    for (const Step &step : program.steps)
      values.push_back(traced(step, values, isFloat<T>));
    const pk::Ref &out = refs.back();
    const pk::Value &last = values.back();
    if (program.store == 1)
      out[pk::slice(pk::none, pk::none, -1)] = last;
    else if (program.store == 2 && last.shape().size() <= 1)
      out[program.row] = last;
    else
      out[pk::all] = last;
  });

  Array<T> result = reference(program, inputs);
  pk::Shape outShape = {program.rows, program.cols};
  Array<T> expected{
      outShape,
      std::vector<Storage<T>>(size_t(elements(outShape)), Storage<T>(T(7)))};
  for (int64_t i = 0; i < elements(outShape); ++i) {
    int64_t r = i / program.cols, col = i % program.cols;
    if (program.store == 1) {
      int64_t flipped = (program.rows - 1 - r) * program.cols + col;
      expected.data[size_t(flipped)] = result.at(outShape, i);
    } else if (program.store == 2 && result.shape.size() <= 1) {
      if (r == program.row)
        expected.data[size_t(i)] = result.at({program.cols}, col);
    } else {
      expected.data[size_t(i)] = result.at(outShape, i);
    }
  }

  std::vector<pk::ArrayView> views;
  for (Array<T> &input : inputs)
    views.push_back({input.data.data(), dtypeOf<T>(), input.shape});
  std::vector<Storage<T>> out(size_t(elements(outShape)), Storage<T>(T(7)));
  views.push_back({out.data(), dtypeOf<T>(), outShape});
  kernel(std::span<const pk::ArrayView>(views));

  for (size_t i = 0; i < out.size(); ++i)
    if (!same(T(out[i]), T(expected.data[i]))) {
      std::fprintf(stderr, "mismatch at %zu: got %.17g, expected %.17g\n", i,
                   double(out[i]), double(expected.data[i]));
      std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Bytes bytes(data, size);
  uint8_t dtype = bytes.next() % 7;
  Program program = decode(bytes);
  switch (dtype) {
  case 0:
    check<float>(program, bytes);
    break;
  case 1:
    check<double>(program, bytes);
    break;
  case 2:
    check<int32_t>(program, bytes);
    break;
  case 3:
    check<int64_t>(program, bytes);
    break;
  case 4:
    check<_Float16>(program, bytes);
    break;
  case 5:
    check<int8_t>(program, bytes);
    break;
  default:
    for (Step &step : program.steps)
      step.op = forBool(step.op);
    check<bool>(program, bytes);
    break;
  }
  return 0;
}
