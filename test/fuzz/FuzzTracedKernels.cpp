//===- FuzzTracedKernels.cpp - random kernels against a reference ---------===//
//
// libFuzzer target: the input bytes are a small straight-line program over
// arrays of one dtype (float32, float64, int32 or int64) with NumPy-style
// broadcasting: elementwise arithmetic, maximum/minimum, abs, negation, a
// comparison feeding where, integer // and %, scalar operands, reversal of
// the last axis, and a final store into the whole output, its rows reversed
// or one row. The program is traced through the C++ API, compiled by the
// JIT and run; a scalar interpreter computes the same program with NumPy's
// rules. Any difference (float results compare by value: NaN equals NaN and
// -0.0 equals 0.0, whose sign NumPy's max/min leave to the instruction set)
// aborts, and so do crashes and sanitizer reports.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Runtime/Kernel.h"

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
  Count
};

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

template <typename T> struct Array {
  pk::Shape shape;
  std::vector<T> data;

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
    return data[size_t(index)];
  }
};

int64_t elements(const pk::Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

template <typename T> T wrap(std::make_unsigned_t<T> value) { return T(value); }

template <typename T> T floorDivide(T a, T b) {
  if (b == 0)
    return 0;
  if (a == std::numeric_limits<T>::min() && b == -1)
    return a;
  T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? T(q - 1) : q;
}

template <typename T> T remainder(T a, T b) {
  if (b == 0 || (a == std::numeric_limits<T>::min() && b == -1))
    return 0;
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
}

template <typename T> T binary(Op op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (op) {
    case Op::Add:
      return wrap<T>(U(a) + U(b));
    case Op::Sub:
      return wrap<T>(U(a) - U(b));
    case Op::Mul:
      return wrap<T>(U(a) * U(b));
    case Op::DivOrFloorDiv:
      return floorDivide(a, b);
    case Op::RemOrSub:
      return remainder(a, b);
    case Op::Max:
      return a > b ? a : b;
    case Op::Min:
      return a < b ? a : b;
    default:
      std::abort();
    }
  } else {
    switch (op) {
    case Op::Add:
      return a + b;
    case Op::Sub:
    case Op::RemOrSub:
      return a - b;
    case Op::Mul:
      return a * b;
    case Op::DivOrFloorDiv:
      return a / b;
    case Op::Max:
      return std::isnan(a) || std::isnan(b) ? T(NAN) : a > b ? a : b;
    case Op::Min:
      return std::isnan(a) || std::isnan(b) ? T(NAN) : a < b ? a : b;
    default:
      std::abort();
    }
  }
}

template <typename T>
Array<T> reference(const Program &program, std::vector<Array<T>> values) {
  for (const Step &step : program.steps) {
    const Array<T> &a = values[step.a], &b = values[step.b],
                   &c = values[step.c];
    Array<T> result;
    switch (step.op) {
    case Op::Neg:
    case Op::Abs:
    case Op::ScalarMul:
    case Op::Reverse:
      result.shape = a.shape;
      break;
    case Op::LessWhere:
      result.shape = broadcast(broadcast(a.shape, b.shape), c.shape);
      break;
    default:
      result.shape = broadcast(a.shape, b.shape);
    }
    int64_t n = elements(result.shape);
    for (int64_t i = 0; i < n; ++i) {
      T x = a.at(result.shape, i);
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        if (step.op == Op::Neg) {
          result.data.push_back(wrap<T>(U(0) - U(x)));
          continue;
        }
        if (step.op == Op::Abs) {
          result.data.push_back(x < 0 ? wrap<T>(U(0) - U(x)) : x);
          continue;
        }
        if (step.op == Op::ScalarMul) {
          result.data.push_back(wrap<T>(U(x) * U(T(step.scalar))));
          continue;
        }
      } else {
        if (step.op == Op::Neg) {
          result.data.push_back(-x);
          continue;
        }
        if (step.op == Op::Abs) {
          result.data.push_back(std::fabs(x));
          continue;
        }
        if (step.op == Op::ScalarMul) {
          result.data.push_back(x * T(step.scalar));
          continue;
        }
      }
      if (step.op == Op::Reverse) {
        int64_t cols = result.shape.empty() ? 1 : result.shape.back();
        int64_t column = i % cols;
        result.data.push_back(a.data[size_t(i - column + (cols - 1 - column))]);
        continue;
      }
      if (step.op == Op::LessWhere) {
        T y = b.at(result.shape, i), z = c.at(result.shape, i);
        result.data.push_back(x < y ? x : z);
        continue;
      }
      result.data.push_back(binary(step.op, x, b.at(result.shape, i)));
    }
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
  case Op::Count:
    break;
  }
  std::abort();
}

template <typename T> pk::DType dtypeOf() {
  if constexpr (std::is_same_v<T, float>)
    return pk::f32;
  else if constexpr (std::is_same_v<T, double>)
    return pk::f64;
  else if constexpr (std::is_same_v<T, int32_t>)
    return pk::i32;
  else
    return pk::i64;
}

template <typename T> bool same(T x, T y) {
  if constexpr (std::is_floating_point_v<T>)
    return x == y || (std::isnan(x) && std::isnan(y));
  else
    return x == y;
}

template <typename T> void check(const Program &program, Bytes &bytes) {
  // Input values: small integers and, for floats, signed zeros, halves,
  // infinities and NaN.
  std::vector<Array<T>> inputs;
  for (const pk::Shape &shape : program.inputShapes) {
    Array<T> array{shape, {}};
    for (int64_t i = 0; i < elements(shape); ++i) {
      uint8_t byte = bytes.next();
      T value = T(int(byte % 9) - 4);
      if constexpr (std::is_floating_point_v<T>) {
        const T special[] = {T(-0.0), T(0.5), INFINITY, -INFINITY, NAN};
        if (byte >= 240)
          value = special[byte % 5];
      } else if (byte >= 250) {
        value = byte % 2 ? std::numeric_limits<T>::min()
                         : std::numeric_limits<T>::max();
      }
      array.data.push_back(value);
    }
    inputs.push_back(std::move(array));
  }

  const bool isFloat = std::is_floating_point_v<T>;
  pk::Kernel kernel("fuzz", [&](const std::vector<pk::Ref> &refs) {
    std::vector<pk::Value> values;
    for (size_t i = 0; i + 1 < refs.size(); ++i)
      values.push_back(refs[i][pk::all]);
    for (const Step &step : program.steps)
      values.push_back(traced(step, values, isFloat));
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
  Array<T> expected{outShape, std::vector<T>(size_t(elements(outShape)), T(7))};
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
  std::vector<T> out(size_t(elements(outShape)), T(7));
  views.push_back({out.data(), dtypeOf<T>(), outShape});
  kernel(std::span<const pk::ArrayView>(views));

  for (size_t i = 0; i < out.size(); ++i)
    if (!same(out[i], expected.data[i])) {
      std::fprintf(stderr, "mismatch at %zu: got %.17g, expected %.17g\n", i,
                   double(out[i]), double(expected.data[i]));
      std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Bytes bytes(data, size);
  uint8_t dtype = bytes.next() % 4;
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
  default:
    check<int64_t>(program, bytes);
    break;
  }
  return 0;
}
