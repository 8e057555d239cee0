//===- Trace.cpp - the C++ tracing frontend -------------------------------===//
//
// Each trace owns a TraceState: the module being built, a builder positioned
// in the kernel body, and the open flag that makes values unusable once
// their trace has ended. The operators only convert operands; NumPy's rules
// (promotion, weak scalars, broadcasting, matmul shapes) are applied here,
// so that the IR below the frontend is explicit.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Frontend/Trace.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Support/Diagnostics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pk {

std::string SourceLoc::str() const {
  if (file.empty())
    return "<unknown>";
  std::string text = file + ":" + std::to_string(line);
  return column ? text + ":" + std::to_string(column) : text;
}

TraceError::TraceError(const std::string &message, SourceLoc where,
                       Category category)
    : std::runtime_error(where.file.empty()
                             ? message
                             : where.str() + ": error: " + message),
      location(std::move(where)), text(message), kind(category) {}

void detail::throwArityMismatch(const std::string &name, size_t takes,
                                size_t given, const SourceLoc &where) {
  throw TraceError("trace: kernel '" + name + "' takes " +
                       std::to_string(takes) +
                       " refs but the signature describes " +
                       std::to_string(given) + " arrays",
                   where);
}

mlir::MLIRContext &defaultContext() {
  // Never destroyed: modules handed out may outlive static destruction.
  static mlir::MLIRContext *context = [] {
    // Without a thread pool, which would not survive fork().
    auto *created = new mlir::MLIRContext(mlir::MLIRContext::Threading::DISABLED);
    created->loadDialect<mlir::pk::PkDialect>();
    return created;
  }();
  return *context;
}

namespace detail {

enum class BinaryKind { Add, Sub, Mul, Div, Max, Min, FloorDiv, Rem };

/// NumPy's name of the operation, used in error messages.
static const char *binaryName(BinaryKind kind) {
  static const char *names[] = {"add",          "subtract", "multiply",
                                "divide",       "maximum",  "minimum",
                                "floor_divide", "remainder"};
  return names[int(kind)];
}
enum class CompareKind { Lt, Le, Gt, Ge, Eq, Ne };

[[noreturn]] static void
fail(const SourceLoc &where, const std::string &op, const std::string &message,
     TraceError::Category category = TraceError::Category::Value) {
  throw TraceError(op + ": " + message, where, category);
}

static std::string quoted(DType dtype) {
  return std::string(dtypeName(dtype));
}

/// An index resolved against a shape: what pk.extract_slice and
/// pk.insert_slice take, and the shape of the part (integer-indexed
/// dimensions dropped).
struct ResolvedIndex {
  llvm::SmallVector<int64_t> offsets, sizes, strides;
  Shape shape;
};

/// NumPy's basic indexing, with NumPy's errors (IndexError for positions
/// out of bounds and too many indices).
static ResolvedIndex resolveIndex(const Shape &shape, const Index &index,
                                  const std::string &op) {
  if (index.items.size() > shape.size())
    fail(index.where, op,
         "too many indices for array: array is " +
             std::to_string(shape.size()) + "-dimensional, but " +
             std::to_string(index.items.size()) + " were indexed",
         TraceError::Category::Index);
  ResolvedIndex resolved;
  for (auto [axis, n] : llvm::enumerate(shape)) {
    IndexItem item =
        axis < index.items.size() ? index.items[axis] : IndexItem(all);
    if (item.isPosition()) {
      int64_t position = item.getPosition();
      if (position < -n || position >= n)
        fail(index.where, op,
             "index " + std::to_string(position) +
                 " is out of bounds for axis " + std::to_string(axis) +
                 " with size " + std::to_string(n),
             TraceError::Category::Index);
      resolved.offsets.push_back(position < 0 ? position + n : position);
      resolved.sizes.push_back(1);
      resolved.strides.push_back(1);
      continue;
    }
    const Slice &range = item.getSlice();
    if (range.step == 0)
      fail(index.where, op, "slice step cannot be zero");
    // Steps longer than the dimension select at most the start; clamping
    // them keeps the arithmetic below in range.
    int64_t limit = std::max<int64_t>(n, 1);
    int64_t step = std::clamp(range.step, -limit, limit);
    bool backwards = step < 0;
    // Python's slice.indices().
    auto clampPosition = [&](std::optional<int64_t> given, int64_t absent) {
      if (!given)
        return absent;
      int64_t position = *given;
      if (position < 0)
        return position < -n ? (backwards ? int64_t(-1) : int64_t(0))
                             : position + n;
      return position >= n ? (backwards ? n - 1 : n) : position;
    };
    int64_t start = clampPosition(range.start, backwards ? n - 1 : 0);
    int64_t stop = clampPosition(range.stop, backwards ? -1 : n);
    int64_t size = backwards
                       ? (stop < start ? (start - stop - 1) / -step + 1 : 0)
                       : (start < stop ? (stop - start - 1) / step + 1 : 0);
    resolved.offsets.push_back(size == 0 ? 0 : start);
    resolved.sizes.push_back(size);
    // A stride means nothing for fewer than two elements: 1 keeps such
    // slices plain (and views of them contiguous).
    resolved.strides.push_back(size <= 1 ? 1 : step);
    resolved.shape.push_back(size);
  }
  return resolved;
}

class TraceState : public std::enable_shared_from_this<TraceState> {
public:
  TraceState(mlir::MLIRContext &context, std::string kernelName,
             const Signature &signature, const SourceLoc &where)
      : name(std::move(kernelName)), builder(&context) {
    context.loadDialect<mlir::pk::PkDialect>();
    checkName("kernel", name, where);
    for (const ArgSpec &arg : signature)
      checkName("parameter", arg.name, where, /*mayBeEmpty=*/true);
    kernelLoc = location(where);
    module = mlir::ModuleOp::create(kernelLoc);
    builder.setInsertionPointToEnd(module->getBody());

    llvm::SmallVector<mlir::Type> argTypes;
    llvm::SmallVector<mlir::Location> argLocs;
    for (auto [i, arg] : llvm::enumerate(signature)) {
      std::string argName =
          arg.name.empty() ? "arg" + std::to_string(i) : arg.name;
      if (llvm::is_contained(refNames, argName))
        fail(where, "trace", "two parameters are named '" + argName + "'");
      refNames.push_back(argName);
      if (arg.aliasOf >= 0) {
        if (size_t(arg.aliasOf) >= i || signature[arg.aliasOf].aliasOf >= 0 ||
            signature[arg.aliasOf].shape != arg.shape ||
            signature[arg.aliasOf].dtype != arg.dtype)
          fail(where, "trace",
               "parameter '" + argName + "' is declared the same array as "
               "parameter #" + std::to_string(arg.aliasOf) +
                   ", which is not an earlier, distinct parameter of the same "
                   "shape and dtype");
        refArg.push_back(refArg[arg.aliasOf]);
        continue;
      }
      for (int64_t dim : arg.shape)
        if (dim < 0)
          fail(where, "trace",
               "parameter '" + argName + "' has a negative dimension in " +
                   "shape " + formatShape(arg.shape));
      // The reason is reported below, in the user's terms.
      DiagnosticCollector quiet(&context);
      mlir::Type type = mlir::pk::RefType::getChecked(
          [&] { return mlir::emitError(kernelLoc); }, &context,
          llvm::ArrayRef<int64_t>(arg.shape), toMlirType(arg.dtype, context));
      if (!type)
        fail(where, "trace",
             "parameter '" + argName + "' of shape " + formatShape(arg.shape) +
                 " and dtype " + quoted(arg.dtype) +
                 " is too large: its size in bytes overflows int64");
      refArg.push_back(argTypes.size());
      argTypes.push_back(type);
      argLocs.push_back(mlir::NameLoc::get(
          mlir::StringAttr::get(&context, argName), kernelLoc));
    }
    kernel = mlir::pk::KernelOp::create(builder, kernelLoc, name,
                                        builder.getFunctionType(argTypes, {}));
    builder.createBlock(&kernel.getBody(), {}, argTypes, argLocs);
  }

  /// Names become symbols and locations: no NUL, and a kernel's not empty.
  static void checkName(const std::string &what, const std::string &name,
                        const SourceLoc &where, bool mayBeEmpty = false) {
    // The location may hold the name itself (a kernel's default one does).
    bool locationHasNul = where.file.find('\0') != std::string::npos;
    if ((!mayBeEmpty && name.empty()) || name.find('\0') != std::string::npos)
      fail(locationHasNul ? SourceLoc() : where, "trace",
           "a " + what + " name must be " +
               (mayBeEmpty ? "" : "a non-empty string ") +
               "without NUL characters; got '" + llvm::join(llvm::split(name, '\0'), "\\0") +
               "'");
  }

  const std::string &kernelName() const { return name; }
  const std::string &argName(unsigned index) const { return refNames[index]; }
  mlir::BlockArgument refValue(unsigned index) {
    return body().getArgument(refArg[index]);
  }
  mlir::pk::RefType refType(unsigned index) {
    checkOpen("use of ref '" + argName(index) + "'", SourceLoc());
    return llvm::cast<mlir::pk::RefType>(refValue(index).getType());
  }

  //===--------------------------------------------------------------------===//
  // Ownership: values belong to one open trace
  //===--------------------------------------------------------------------===//

  static std::shared_ptr<TraceState> &stateOf(const Value &value) {
    return const_cast<Value &>(value).state;
  }

  void checkOpen(const std::string &op, const SourceLoc &where) const {
    if (!open)
      fail(where, op,
           "kernel '" + name +
               "' is no longer being traced: its values and refs cannot be "
               "used after the trace ended");
  }

  /// The trace that the traced operands of one operation belong to.
  static TraceState &owner(std::initializer_list<const Operand *> operands,
                           const std::string &op) {
    TraceState *state = nullptr;
    for (const Operand *operand : operands) {
      if (operand->getKind() != Operand::Kind::Value)
        continue;
      TraceState *candidate = stateOf(operand->getValue()).get();
      if (!candidate || !operand->getValue().ir())
        fail(operand->where(), op,
             "use of an empty pk::Value (default-constructed)");
      if (state && state != candidate)
        fail(operand->where(), op,
             "operands come from the traces of kernels '" + state->name +
                 "' and '" + candidate->name +
                 "': a value belongs to the trace that made it");
      state = candidate;
      state->checkOpen(op, operand->where());
    }
    if (!state)
      fail((*operands.begin())->where(), op, "needs a traced operand");
    return *state;
  }

  //===--------------------------------------------------------------------===//
  // Building blocks
  //===--------------------------------------------------------------------===//

  mlir::Location location(const SourceLoc &where) {
    if (where.file.empty())
      return builder.getUnknownLoc();
    return mlir::FileLineColLoc::get(builder.getContext(), where.file,
                                     where.line, where.column);
  }

  Value wrap(mlir::Value value) { return Value(shared_from_this(), value); }

  mlir::RankedTensorType tensorType(const Shape &shape, DType dtype) {
    return mlir::RankedTensorType::get(
        shape, toMlirType(dtype, *builder.getContext()));
  }

  static Shape shapeOf(mlir::Value value) {
    auto type = llvm::cast<mlir::RankedTensorType>(value.getType());
    return Shape(type.getShape().begin(), type.getShape().end());
  }

  static DType dtypeOf(mlir::Value value) {
    return *fromMlirType(
        llvm::cast<mlir::RankedTensorType>(value.getType()).getElementType());
  }

  static Shape shapeOf(const Operand &operand) {
    if (operand.getKind() == Operand::Kind::Value)
      return shapeOf(operand.getValue().ir());
    if (operand.getKind() == Operand::Kind::Array)
      return operand.getArray().shape;
    return {};
  }

  /// A C++ number as an element of `dtype`, or an error if it does not fit
  /// (NumPy raises OverflowError for out-of-bounds Python integers).
  mlir::TypedAttr scalarAttr(const Operand &number, DType dtype,
                             const std::string &op) {
    mlir::MLIRContext &context = *builder.getContext();
    mlir::Type type = toMlirType(dtype, context);
    bool isFloatNumber = number.getKind() == Operand::Kind::Float ||
                         number.isBigInteger();
    if (number.isBigInteger() && !isFloat(dtype))
      fail(number.where(), op,
           "integer " + formatBigInteger(number) + " does not fit in " +
               quoted(dtype) +
               " (NumPy raises OverflowError: Python int too large to "
               "convert to C long)",
           TraceError::Category::Overflow);
    if (number.isBigInteger() && std::isinf(number.getFloat()))
      fail(number.where(), op,
           "integer " + formatBigInteger(number) +
               " is too large to convert to " + quoted(dtype) +
               " (NumPy raises OverflowError: int too large to convert to "
               "float)",
           TraceError::Category::Overflow);
    if (isFloat(dtype)) {
      const llvm::fltSemantics &semantics =
          llvm::cast<mlir::FloatType>(type).getFloatSemantics();
      llvm::APFloat value(isFloatNumber ? number.getFloat()
                                        : double(number.getInteger()));
      if (!isFloatNumber) {
        value = llvm::APFloat(semantics);
        value.convertFromAPInt(llvm::APInt(64, number.getInteger(), true),
                               /*IsSigned=*/true,
                               llvm::APFloat::rmNearestTiesToEven);
      } else {
        bool losesInfo = false;
        value.convert(semantics, llvm::APFloat::rmNearestTiesToEven,
                      &losesInfo);
      }
      return mlir::FloatAttr::get(type, value);
    }
    if (dtype == DType::Bool)
      return mlir::IntegerAttr::get(
          type, llvm::APInt(1, isFloatNumber ? number.getFloat() != 0.0
                                             : number.getInteger() != 0));
    int64_t value = number.getInteger();
    if (isFloatNumber) {
      // As NumPy's `int_array[...] = 2.7`: truncation toward zero.
      double truncated = std::trunc(number.getFloat());
      if (!std::isfinite(truncated) || truncated < -0x1p63 ||
          truncated >= 0x1p63)
        fail(number.where(), op,
             "the number " + std::to_string(number.getFloat()) +
                 " cannot be converted to " + quoted(dtype),
             TraceError::Category::Overflow);
      value = int64_t(truncated);
    }
    unsigned bits = type.getIntOrFloatBitWidth();
    int64_t lo = bits == 64 ? std::numeric_limits<int64_t>::min()
                            : -(int64_t(1) << (bits - 1));
    int64_t hi = bits == 64 ? std::numeric_limits<int64_t>::max()
                            : (int64_t(1) << (bits - 1)) - 1;
    if (value < lo || value > hi)
      fail(number.where(), op,
           "integer scalar " + std::to_string(value) +
               " is out of bounds for " + quoted(dtype) +
               " (NumPy raises OverflowError)",
           TraceError::Category::Overflow);
    return mlir::IntegerAttr::get(type, llvm::APInt(bits, value, true));
  }

  /// A big integer's value for messages: exact below 2^64, else the
  /// nearest double (2^70 is 1.1805916207174113e+21).
  static std::string formatBigInteger(const Operand &number) {
    if (std::optional<int64_t> bits = number.wrappedToInt64())
      return std::to_string(uint64_t(*bits));
    if (std::isinf(number.getFloat()))
      return number.getFloat() > 0 ? ">= 2^1024" : "<= -2^1024";
    char text[32];
    std::snprintf(text, sizeof(text), "%.17g", number.getFloat());
    return text;
  }

  /// Whether an integer dtype holds `value`.
  static bool fitsIn(int64_t value, DType dtype) {
    unsigned bits = unsigned(itemSize(dtype)) * 8;
    if (bits >= 64)
      return true;
    int64_t limit = int64_t(1) << (bits - 1);
    return value >= -limit && value < limit;
  }

  /// `operand` as a tensor of `dtype` and `shape`: casts and broadcasts a
  /// traced value, splats a number.
  mlir::Value materialize(const Operand &operand, DType dtype,
                          const Shape &shape, const std::string &op) {
    mlir::Location loc = location(operand.where());
    mlir::Value value;
    switch (operand.getKind()) {
    case Operand::Kind::Value:
      value = operand.getValue().ir();
      break;
    case Operand::Kind::Array:
      value = constantArray(operand.getArray(), loc);
      break;
    default: {
      auto type = tensorType(shape, dtype);
      auto splat = mlir::DenseElementsAttr::get(
          type, llvm::ArrayRef<mlir::Attribute>(scalarAttr(operand, dtype, op)));
      return mlir::pk::ConstantOp::create(builder, loc, splat);
    }
    }
    if (dtypeOf(value) != dtype)
      value = mlir::pk::CastOp::create(builder, loc,
                                       tensorType(shapeOf(value), dtype), value);
    if (shapeOf(value) != shape)
      value = mlir::pk::BroadcastOp::create(builder, loc,
                                            tensorType(shape, dtype), value);
    return value;
  }

  /// The element type an operand has as an array: a traced value's, or a
  /// pk::typed number's. Plain C++ numbers have none (weakly typed).
  static std::optional<DType> arrayType(const Operand &operand) {
    if (operand.getKind() == Operand::Kind::Value)
      return dtypeOf(operand.getValue().ir());
    if (operand.getKind() == Operand::Kind::Array)
      return operand.getArray().dtype;
    return operand.numberType();
  }

  mlir::Value constantArray(const Operand::ConstantArray &array,
                            mlir::Location loc) {
    auto type = tensorType(array.shape, array.dtype);
    mlir::DenseElementsAttr attr;
    if (array.dtype == DType::Bool) {
      llvm::SmallVector<bool> bits(array.bytes.begin(), array.bytes.end());
      attr = mlir::DenseElementsAttr::get(type, llvm::ArrayRef<bool>(bits));
    } else {
      attr = mlir::DenseElementsAttr::getFromRawBuffer(
          type, llvm::ArrayRef<char>(
                    reinterpret_cast<const char *>(array.bytes.data()),
                    array.bytes.size()));
    }
    return mlir::pk::ConstantOp::create(builder, loc, attr);
  }

  /// NumPy's result type for two operands, Python scalars being weak (NEP
  /// 50): a number takes the array's type, except that an integer array and
  /// a floating-point number compute in float64 and a bool array and an
  /// integer in int64.
  static DType resultType(const Operand &lhs, const Operand &rhs) {
    std::optional<DType> lhsType = arrayType(lhs), rhsType = arrayType(rhs);
    if (lhsType && rhsType)
      return promoteTypes(*lhsType, *rhsType);
    if (!lhsType && !rhsType) // two Python numbers: Python's own kinds
      return std::max(weakType(lhs), weakType(rhs));
    DType dtype = lhsType ? *lhsType : *rhsType;
    const Operand &number = lhsType ? rhs : lhs;
    switch (number.getKind()) {
    case Operand::Kind::Float:
      return isFloat(dtype) ? dtype : DType::F64;
    case Operand::Kind::Integer:
      return dtype == DType::Bool ? DType::I64 : dtype;
    default:
      return dtype;
    }
  }

  /// The dtype NumPy gives a lone Python number: bool, int64 or float64
  /// (DType orders them so).
  static DType weakType(const Operand &number) {
    switch (number.getKind()) {
    case Operand::Kind::Bool:
      return DType::Bool;
    case Operand::Kind::Integer:
      return DType::I64;
    default:
      return DType::F64;
    }
  }

  Shape broadcastOperands(const Operand &lhs, const Operand &rhs,
                          const std::string &op) {
    Shape lhsShape = shapeOf(lhs), rhsShape = shapeOf(rhs);
    std::optional<Shape> shape = broadcastShapes(lhsShape, rhsShape);
    if (!shape)
      fail(lhs.where(), op,
           "operands of shapes " + formatShape(lhsShape) + " and " +
               formatShape(rhsShape) + " cannot be broadcast together");
    return *shape;
  }

  //===--------------------------------------------------------------------===//
  // Operations
  //===--------------------------------------------------------------------===//

  Value binary(BinaryKind kind, const Operand &lhs, const Operand &rhs) {
    std::string op = binaryName(kind);
    Shape shape = broadcastOperands(lhs, rhs, op);
    DType dtype = resultType(lhs, rhs);
    mlir::Location loc = location(lhs.where());

    if (kind == BinaryKind::Div && !isFloat(dtype))
      dtype = DType::F64; // true division, as NumPy's `/`
    if (kind == BinaryKind::Max || kind == BinaryKind::Min) {
      mlir::Value l = materialize(lhs, dtype, shape, op);
      mlir::Value r = materialize(rhs, dtype, shape, op);
      if (kind == BinaryKind::Max)
        return wrap(mlir::pk::MaximumOp::create(builder, loc, l, r));
      return wrap(mlir::pk::MinimumOp::create(builder, loc, l, r));
    }
    if (kind == BinaryKind::FloorDiv || kind == BinaryKind::Rem) {
      if (dtype == DType::Bool)
        dtype = DType::I8; // NumPy's bool // bool and bool % bool are int8
      mlir::Value l = materialize(lhs, dtype, shape, op);
      mlir::Value r = materialize(rhs, dtype, shape, op);
      if (kind == BinaryKind::FloorDiv)
        return wrap(mlir::pk::FloorDivOp::create(builder, loc, l, r));
      return wrap(mlir::pk::RemOp::create(builder, loc, l, r));
    }
    if (dtype == DType::Bool) {
      if (kind == BinaryKind::Sub)
        fail(lhs.where(), op,
             "boolean subtract, the `-` operator, is not supported (as in "
             "NumPy); cast to a number type first with pk::cast",
             TraceError::Category::Type);
      // NumPy's bool + bool is logical or, bool * bool logical and: compute
      // in int8 (0/1 operands cannot wrap to zero) and compare with zero.
      mlir::Value l = materialize(lhs, DType::I8, shape, op);
      mlir::Value r = materialize(rhs, DType::I8, shape, op);
      mlir::Value result =
          kind == BinaryKind::Add
              ? mlir::Value(mlir::pk::AddOp::create(builder, loc, l, r))
              : mlir::Value(mlir::pk::MulOp::create(builder, loc, l, r));
      return wrap(mlir::pk::CastOp::create(
          builder, loc, tensorType(shape, DType::Bool), result));
    }

    mlir::Value l = materialize(lhs, dtype, shape, op);
    mlir::Value r = materialize(rhs, dtype, shape, op);
    switch (kind) {
    case BinaryKind::Add:
      return wrap(mlir::pk::AddOp::create(builder, loc, l, r));
    case BinaryKind::Sub:
      return wrap(mlir::pk::SubOp::create(builder, loc, l, r));
    case BinaryKind::Mul:
      return wrap(mlir::pk::MulOp::create(builder, loc, l, r));
    case BinaryKind::Div:
      return wrap(mlir::pk::DivOp::create(builder, loc, l, r));
    default:
      llvm_unreachable("handled above");
    }
  }

  /// `x kind huge` (or `huge kind x` unless `hugeOnRight`) for every
  /// integer x, where huge is beyond int64, positive or not.
  static bool comparedWithHuge(CompareKind kind, bool hugeOnRight,
                               bool positive) {
    bool xBelow = hugeOnRight == positive; // the left side is the smaller
    switch (kind) {
    case CompareKind::Lt:
    case CompareKind::Le:
      return xBelow;
    case CompareKind::Gt:
    case CompareKind::Ge:
      return !xBelow;
    case CompareKind::Eq:
      return false;
    case CompareKind::Ne:
      return true;
    }
    llvm_unreachable("unknown comparison");
  }

  Value compare(CompareKind kind, const Operand &lhs, const Operand &rhs) {
    static const char *names[] = {"less",  "less_equal", "greater",
                                  "greater_equal", "equal", "not_equal"};
    std::string op = names[int(kind)];
    Shape shape = broadcastOperands(lhs, rhs, op);
    DType dtype = resultType(lhs, rhs);
    // NumPy 2 compares integers with a Python integer their dtype cannot
    // hold by its value (`int8_array < 1000` is all true): in int64, and
    // beyond int64 by the number's sign alone.
    if (isInteger(dtype))
      for (const Operand *number : {&lhs, &rhs}) {
        if (arrayType(*number) || number->getKind() != Operand::Kind::Integer)
          continue;
        const Operand &array = number == &lhs ? rhs : lhs;
        if (number->isBigInteger() && arrayType(array) &&
            isInteger(*arrayType(array)))
          return wrap(materialize(
              Operand::fromBool(comparedWithHuge(kind, number == &rhs,
                                                 number->getFloat() > 0),
                                lhs.where()),
              DType::Bool, shape, op));
        if (!number->isBigInteger() && !fitsIn(number->getInteger(), dtype))
          dtype = DType::I64;
      }
    mlir::Location loc = location(lhs.where());
    mlir::Value l = materialize(lhs, dtype, shape, op);
    mlir::Value r = materialize(rhs, dtype, shape, op);
    switch (kind) {
    case CompareKind::Lt:
      return wrap(mlir::pk::LessOp::create(builder, loc, l, r));
    case CompareKind::Le:
      return wrap(mlir::pk::LessEqualOp::create(builder, loc, l, r));
    case CompareKind::Gt:
      return wrap(mlir::pk::GreaterOp::create(builder, loc, l, r));
    case CompareKind::Ge:
      return wrap(mlir::pk::GreaterEqualOp::create(builder, loc, l, r));
    case CompareKind::Eq:
      return wrap(mlir::pk::EqualOp::create(builder, loc, l, r));
    case CompareKind::Ne:
      return wrap(mlir::pk::NotEqualOp::create(builder, loc, l, r));
    }
    llvm_unreachable("unknown comparison");
  }

  Value mathFunction(MathFunction function, const Operand &operand) {
    static const char *names[] = {"exp",   "log",  "log1p", "expm1",
                                  "sqrt",  "rsqrt", "tanh", "sin",
                                  "cos",   "floor", "ceil", "sigmoid",
                                  "erf"};
    std::string op = names[int(function)];
    DType dtype = *arrayType(operand);
    // NumPy 2 rounds integers and booleans to themselves.
    if ((function == MathFunction::Floor || function == MathFunction::Ceil) &&
        !isFloat(dtype))
      return wrap(materialize(operand, dtype, shapeOf(operand), op));
    if (!isFloat(dtype))
      dtype = promoteTypes(dtype, DType::F16); // NumPy: int8 -> float16, ...
    mlir::Value x = materialize(operand, dtype, shapeOf(operand), op);
    mlir::Location loc = location(operand.where());
    switch (function) {
    case MathFunction::Exp:
      return wrap(mlir::pk::ExpOp::create(builder, loc, x));
    case MathFunction::Log:
      return wrap(mlir::pk::LogOp::create(builder, loc, x));
    case MathFunction::Log1p:
      return wrap(mlir::pk::Log1pOp::create(builder, loc, x));
    case MathFunction::Expm1:
      return wrap(mlir::pk::Expm1Op::create(builder, loc, x));
    case MathFunction::Sqrt:
      return wrap(mlir::pk::SqrtOp::create(builder, loc, x));
    case MathFunction::Rsqrt:
      return wrap(mlir::pk::RsqrtOp::create(builder, loc, x));
    case MathFunction::Tanh:
      return wrap(mlir::pk::TanhOp::create(builder, loc, x));
    case MathFunction::Sin:
      return wrap(mlir::pk::SinOp::create(builder, loc, x));
    case MathFunction::Cos:
      return wrap(mlir::pk::CosOp::create(builder, loc, x));
    case MathFunction::Floor:
      return wrap(mlir::pk::FloorOp::create(builder, loc, x));
    case MathFunction::Ceil:
      return wrap(mlir::pk::CeilOp::create(builder, loc, x));
    case MathFunction::Sigmoid:
      return wrap(mlir::pk::SigmoidOp::create(builder, loc, x));
    case MathFunction::Erf:
      return wrap(mlir::pk::ErfOp::create(builder, loc, x));
    }
    llvm_unreachable("unknown math function");
  }

  Value power(const Operand &base, const Operand &exponent, bool inPlace) {
    const std::string op = "power";
    Shape shape = broadcastOperands(base, exponent, op);
    DType dtype = resultType(base, exponent);
    // NumPy has no boolean power: bool ** bool, and a boolean array to a
    // Python integer's power, compute in int8.
    if (dtype == DType::Bool ||
        (arrayType(base) == DType::Bool && !arrayType(exponent) &&
         exponent.getKind() == Operand::Kind::Integer))
      dtype = DType::I8;
    bool weakNumber = !exponent.numberType() &&
                      (exponent.getKind() == Operand::Kind::Integer ||
                       exponent.getKind() == Operand::Kind::Float);
    mlir::Location loc = location(base.where());
    if (!isFloat(dtype)) {
      if (exponent.getKind() != Operand::Kind::Integer &&
          exponent.getKind() != Operand::Kind::Bool)
        fail(exponent.where(), op,
             "integer powers (" + quoted(dtype) +
                 " ** ...) need a constant exponent, whose sign is known "
                 "when tracing (NumPy raises for negative ones); use a "
                 "floating-point base or exponent",
             TraceError::Category::Type);
      // The exponent converts to the base's integer dtype first (an
      // OverflowError even without elements); NumPy raises for negative
      // ones in its loop, so arrays without elements raise nothing.
      if (exponent.isBigInteger())
        scalarAttr(exponent, dtype, op);
      std::optional<DType> baseType = arrayType(base);
      if (weakNumber && baseType && isInteger(*baseType) &&
          !fitsIn(exponent.getInteger(), *baseType))
        fail(exponent.where(), op,
             "Python integer " + std::to_string(exponent.getInteger()) +
                 " out of bounds for " + quoted(*baseType) +
                 " (NumPy raises OverflowError)",
             TraceError::Category::Overflow);
      bool empty = llvm::is_contained(shape, 0);
      if (exponent.getInteger() < 0 && !empty)
        fail(exponent.where(), op,
             "integers to negative integer powers are not allowed (NumPy "
             "raises ValueError); use a floating-point base",
             TraceError::Category::Value);
      if (empty)
        return wrap(materialize(Operand::fromInteger(0, base.where()), dtype,
                                shape, op));
      return wrap(integerPower(materialize(base, dtype, shape, op),
                               uint64_t(exponent.getInteger()), loc));
    }
    mlir::Value b = materialize(base, dtype, shape, op);
    if (weakNumber) {
      // NumPy's fast paths for `array ** python_scalar` (square, sqrt,
      // reciprocal, ones, copy): the same results, without a pow call.
      double e = exponent.getKind() == Operand::Kind::Integer &&
                         !exponent.isBigInteger()
                     ? double(exponent.getInteger())
                     : exponent.getFloat();
      auto number = [&](double value) {
        return materialize(Operand::fromFloat(value, base.where()), dtype,
                           shape, op);
      };
      if (e == 2.0)
        return wrap(mlir::pk::MulOp::create(builder, loc, b, b));
      // Cubes and fourth powers as multiplications, as jax.numpy and numexpr
      // do (NumPy calls pow): within 2 ulp of it, and no pow call in gelu.
      if (e == 3.0 || e == 4.0) {
        mlir::Value square = mlir::pk::MulOp::create(builder, loc, b, b);
        return wrap(mlir::pk::MulOp::create(builder, loc, square,
                                            e == 3.0 ? b : square));
      }
      if (e == 0.5)
        return wrap(mlir::pk::SqrtOp::create(builder, loc, b));
      if (e == -1.0)
        return wrap(mlir::pk::DivOp::create(builder, loc, number(1.0), b));
      if (e == 1.0)
        return wrap(b);
      if (e == 0.0)
        return wrap(number(1.0));
    }
    mlir::Value e = materialize(exponent, dtype, shape, op);
    mlir::Value result = mlir::pk::PowOp::create(builder, loc, b, e);
    if ((dtype == DType::F32 || dtype == DType::F64) &&
        exponentRepeatsAcrossLoop(base, exponent, shape, inPlace)) {
      // NumPy's float32/float64 power loop takes sqrt(x) for an exponent
      // of 0.5 held in its one repeated element; sqrt differs from pow at
      // -inf (nan, not inf) and -0.0 (-0.0, not 0.0).
      mlir::Value half = materialize(Operand::fromFloat(0.5, exponent.where()),
                                     dtype, shape, op);
      mlir::Value isHalf = mlir::pk::EqualOp::create(builder, loc, e, half);
      mlir::Value root = mlir::pk::SqrtOp::create(builder, loc, b);
      result = mlir::pk::SelectOp::create(builder, loc, isHalf, root, result);
    }
    return wrap(result);
  }

  /// Whether NumPy's power loop sees the exponent with stride 0: one
  /// element, unless NumPy takes its trivial loop (every operand 0-d or of
  /// the result's shape, and the output a new array), which steps through
  /// a one-element exponent of the result's shape with its own stride.
  static bool exponentRepeatsAcrossLoop(const Operand &base,
                                        const Operand &exponent,
                                        const Shape &result, bool inPlace) {
    Shape exponentShape = shapeOf(exponent);
    if (llvm::any_of(exponentShape, [](int64_t d) { return d != 1; }))
      return false;
    if (exponentShape.empty() || inPlace)
      return true;
    Shape baseShape = shapeOf(base);
    bool trivial = exponentShape == result &&
                   (baseShape.empty() || baseShape == result);
    return !trivial;
  }

  /// `value ** exponent` by repeated squaring: wrapping multiplications
  /// give NumPy's integer power exactly.
  mlir::Value integerPower(mlir::Value value, uint64_t exponent,
                           mlir::Location loc) {
    mlir::Value result;
    for (mlir::Value square = value; exponent; exponent >>= 1) {
      if (exponent & 1)
        result = result ? mlir::Value(mlir::pk::MulOp::create(builder, loc,
                                                              result, square))
                        : square;
      if (exponent > 1)
        square = mlir::pk::MulOp::create(builder, loc, square, square);
    }
    if (result)
      return result;
    auto type = mlir::cast<mlir::RankedTensorType>(value.getType());
    return mlir::pk::ConstantOp::create(
        builder, loc,
        mlir::DenseElementsAttr::get(
            type, builder.getIntegerAttr(type.getElementType(), 1)));
  }

  enum class ReduceKind { Sum, Max, Min, Mean };

  /// NumPy's reductions. `axes` absent means every axis; an empty list
  /// reduces nothing (NumPy's `axis=()`: the value, converted as the
  /// reduction would convert it).
  Value reduce(ReduceKind kind, const Operand &operand, const Axes &given,
               bool keepdims) {
    const std::optional<std::vector<int64_t>> &requested = given.get();
    static const char *names[] = {"sum", "max", "min", "mean"};
    std::string op = names[int(kind)];
    Shape shape = shapeOf(operand);
    int64_t rank = int64_t(shape.size());
    std::vector<int64_t> axes;
    if (!requested) {
      for (int64_t d = 0; d < rank; ++d)
        axes.push_back(d);
    } else {
      for (int64_t axis : *requested) {
        // NumPy's sum, max and min of a 0-d array take axis 0 and -1, as
        // an integer (not in a tuple; its mean takes neither).
        if (rank == 0 && (axis == 0 || axis == -1) && given.isInteger() &&
            kind != ReduceKind::Mean)
          continue;
        if (axis < -rank || axis >= rank)
          fail(operand.where(), op,
               "axis " + std::to_string(axis) +
                   " is out of bounds for array of dimension " +
                   std::to_string(rank),
               TraceError::Category::Axis);
        axes.push_back(axis < 0 ? axis + rank : axis);
      }
    }
    for (size_t i = 0; i < axes.size(); ++i)
      if (std::count(axes.begin(), axes.end(), axes[i]) > 1)
        fail(operand.where(), op, "duplicate value in 'axis'");
    std::sort(axes.begin(), axes.end());

    DType dtype = *arrayType(operand);
    DType compute = dtype;
    // NumPy sums bools and integers in int64 and averages them in float64;
    // it accumulates float16 in float32 (and so does bfloat16 here).
    if (kind == ReduceKind::Sum && !isFloat(dtype))
      compute = DType::I64;
    if (kind == ReduceKind::Mean && !isFloat(dtype))
      compute = DType::F64;
    if ((kind == ReduceKind::Sum || kind == ReduceKind::Mean) &&
        (dtype == DType::F16 || dtype == DType::BF16))
      compute = DType::F32;
    DType resultDType = compute == DType::F32 && isFloat(dtype) ? dtype : compute;

    Shape resultShape;
    int64_t count = 1;
    for (int64_t d = 0; d < rank; ++d) {
      bool reduced = llvm::is_contained(axes, d);
      if (reduced)
        count *= shape[d];
      if (!reduced || keepdims)
        resultShape.push_back(reduced ? 1 : shape[d]);
    }
    if ((kind == ReduceKind::Max || kind == ReduceKind::Min) &&
        llvm::any_of(axes, [&](int64_t d) { return shape[d] == 0; }))
      fail(operand.where(), op,
           std::string("zero-size array to reduction operation ") +
               (kind == ReduceKind::Max ? "maximum" : "minimum") +
               " which has no identity");
    mlir::Location loc = location(operand.where());
    // Nothing to reduce: the value itself, in the result's dtype.
    if (axes.empty())
      return wrap(materialize(operand, resultDType, shape, op));

    mlir::Value x = materialize(operand, compute, shape, op);
    auto resultType = tensorType(resultShape, compute);
    mlir::Value result;
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      result = mlir::pk::ReduceSumOp::create(builder, loc, resultType, x,
                                             axes, keepdims);
      break;
    case ReduceKind::Max:
      result = mlir::pk::ReduceMaxOp::create(builder, loc, resultType, x,
                                             axes, keepdims);
      break;
    case ReduceKind::Min:
      result = mlir::pk::ReduceMinOp::create(builder, loc, resultType, x,
                                             axes, keepdims);
      break;
    }
    if (kind == ReduceKind::Mean) {
      auto countAttr = mlir::DenseElementsAttr::get(
          resultType, llvm::ArrayRef<mlir::Attribute>(scalarAttr(
                          Operand::fromFloat(double(count), operand.where()),
                          compute, op)));
      mlir::Value divisor =
          mlir::pk::ConstantOp::create(builder, loc, countAttr);
      result = mlir::pk::DivOp::create(builder, loc, result, divisor);
    }
    if (compute != resultDType)
      result = mlir::pk::CastOp::create(
          builder, loc, tensorType(resultShape, resultDType), result);
    return wrap(result);
  }

  Value absolute(const Operand &operand) {
    return wrap(mlir::pk::AbsOp::create(builder, location(operand.where()),
                                        operand.getValue().ir()));
  }

  Value select(const Operand &condition, const Operand &a, const Operand &b) {
    const std::string op = "where";
    Shape valueShape = broadcastOperands(a, b, op);
    Shape conditionShape = shapeOf(condition);
    std::optional<Shape> shape = broadcastShapes(conditionShape, valueShape);
    if (!shape)
      fail(condition.where(), op,
           "condition of shape " + formatShape(conditionShape) +
               " and values of shape " + formatShape(valueShape) +
               " cannot be broadcast together");
    DType dtype = resultType(a, b);
    // np.where converts Python integers with a C cast: one the integer
    // dtype cannot hold wraps (where arithmetic would raise).
    // Python integers from 2^63 to 2^64 convert as uint64 first, and only
    // larger ones raise (OverflowError).
    auto converted = [&](const Operand &value) {
      if (arrayType(value) || value.getKind() != Operand::Kind::Integer ||
          !isInteger(dtype))
        return value;
      std::optional<int64_t> number =
          value.isBigInteger() ? value.wrappedToInt64()
                               : std::optional<int64_t>(value.getInteger());
      if (!number || (fitsIn(*number, dtype) && !value.isBigInteger()))
        return value;
      unsigned bits = unsigned(itemSize(dtype)) * 8;
      return Operand::fromInteger(
          llvm::APInt(64, uint64_t(*number)).trunc(bits).getSExtValue(),
          value.where());
    };
    mlir::Value c = materialize(condition, DType::Bool, *shape, op);
    mlir::Value t = materialize(converted(a), dtype, *shape, op);
    mlir::Value f = materialize(converted(b), dtype, *shape, op);
    return wrap(mlir::pk::SelectOp::create(builder,
                                           location(condition.where()), c, t, f));
  }

  Value negate(const Operand &operand) {
    mlir::Value value = operand.getValue().ir();
    if (dtypeOf(value) == DType::Bool)
      fail(operand.where(), "negative",
           "the boolean negative, the `-` operator, is not supported (as in "
           "NumPy); cast to a number type first with pk::cast",
           TraceError::Category::Type);
    return wrap(
        mlir::pk::NegOp::create(builder, location(operand.where()), value));
  }

  Value matmul(const Operand &lhs, const Operand &rhs) {
    const std::string op = "matmul";
    for (const Operand *operand : {&lhs, &rhs})
      if (!arrayType(*operand) || shapeOf(*operand).empty())
        fail(operand->where(), op,
             "operands must be arrays of at least one dimension (NumPy's @ "
             "rejects scalars with a ValueError; use * to scale)",
             TraceError::Category::Value);
    Shape lhsShape = shapeOf(lhs), rhsShape = shapeOf(rhs);
    size_t lhsRank = lhsShape.size(), rhsRank = rhsShape.size();
    int64_t lhsK = lhsShape.back();
    int64_t rhsK = rhsShape[rhsRank == 1 ? 0 : rhsRank - 2];
    if (lhsK != rhsK)
      fail(lhs.where(), op,
           "shapes " + formatShape(lhsShape) + " @ " + formatShape(rhsShape) +
               " do not align: the contracted dimensions are " +
               std::to_string(lhsK) + " and " + std::to_string(rhsK));

    // Batch dimensions broadcast against each other, explicitly.
    Shape lhsTarget = lhsShape, rhsTarget = rhsShape;
    Shape batch;
    if (lhsRank >= 2 && rhsRank >= 2) {
      Shape lhsBatch(lhsShape.begin(), lhsShape.end() - 2);
      Shape rhsBatch(rhsShape.begin(), rhsShape.end() - 2);
      std::optional<Shape> common = broadcastShapes(lhsBatch, rhsBatch);
      if (!common)
        fail(lhs.where(), op,
             "batch dimensions " + formatShape(lhsBatch) + " and " +
                 formatShape(rhsBatch) + " of shapes " +
                 formatShape(lhsShape) + " @ " + formatShape(rhsShape) +
                 " cannot be broadcast together");
      batch = *common;
      lhsTarget = batch;
      lhsTarget.insert(lhsTarget.end(), lhsShape.end() - 2, lhsShape.end());
      rhsTarget = batch;
      rhsTarget.insert(rhsTarget.end(), rhsShape.end() - 2, rhsShape.end());
    } else if (lhsRank >= 2) {
      batch.assign(lhsShape.begin(), lhsShape.end() - 2);
    } else if (rhsRank >= 2) {
      batch.assign(rhsShape.begin(), rhsShape.end() - 2);
    }
    Shape result = batch;
    if (lhsRank >= 2)
      result.push_back(lhsShape[lhsRank - 2]);
    if (rhsRank >= 2)
      result.push_back(rhsShape.back());

    DType dtype = resultType(lhs, rhs);
    // NumPy's bool @ bool is "any(a and b)": count in int64, test nonzero.
    // float16 products accumulate in float32, rounded once (NumPy's
    // half-precision dot), and so does bfloat16.
    DType computeType = dtype == DType::Bool ? DType::I64
                        : dtype == DType::F16 || dtype == DType::BF16
                            ? DType::F32
                            : dtype;
    mlir::Location loc = location(lhs.where());
    mlir::Value l = materialize(lhs, computeType, lhsTarget, op);
    mlir::Value r = materialize(rhs, computeType, rhsTarget, op);
    mlir::Value product = mlir::pk::MatmulOp::create(
        builder, loc, tensorType(result, computeType), l, r);
    if (computeType != dtype)
      product = mlir::pk::CastOp::create(builder, loc,
                                         tensorType(result, dtype), product);
    return wrap(product);
  }

  Value cast(const Operand &operand, DType dtype) {
    mlir::Value value = operand.getValue().ir();
    return wrap(materialize(operand, dtype, shapeOf(value), "cast"));
  }

  Value load(unsigned index, const SourceLoc &where) {
    checkOpen("load of '" + argName(index) + "'", where);
    return wrap(mlir::pk::LoadOp::create(builder, location(where),
                                         refType(index).getTensorType(),
                                         refValue(index)));
  }

  void store(unsigned index, const Operand &value) {
    std::string op = "store to '" + argName(index) + "'";
    checkOpen(op, value.where());
    mlir::pk::RefType ref = refType(index);
    Shape refShape(ref.getShape().begin(), ref.getShape().end());
    mlir::Value stored =
        storable(index, value, refShape, "ref '" + argName(index) + "'", op);
    mlir::pk::StoreOp::create(builder, location(value.where()), stored,
                              refValue(index));
    hasStore = true;
  }

  /// `ref[index] = value`: the ref's contents with the slice replaced.
  void store(unsigned ref, const Index &index, const Operand &value) {
    std::string op = "store to '" + argName(ref) + "'";
    checkOpen(op, index.where);
    Shape refShape(refType(ref).getShape().begin(),
                   refType(ref).getShape().end());
    ResolvedIndex part = resolveIndex(refShape, index, op);
    // An integer per dimension names one element: NumPy assigns it a
    // scalar, never an array (it has no dimension to drop or broadcast);
    // for a boolean element, any one-element array (its truth value).
    Shape valueShape = shapeOf(value);
    bool oneElement = llvm::all_of(valueShape, [](int64_t d) { return d == 1; });
    if (index.items.size() == refShape.size() &&
        llvm::all_of(index.items,
                     [](const IndexItem &item) { return item.isPosition(); }) &&
        !valueShape.empty() &&
        !(oneElement && *fromMlirType(refType(ref).getElementType()) == DType::Bool))
      fail(value.where(), op,
           "setting an array element with a sequence: ref '" + argName(ref) +
               "'[...] with an integer per dimension is one element, but the "
               "value has shape " +
               formatShape(valueShape));
    mlir::Value stored = storable(ref, value, part.shape,
                                  "a slice of ref '" + argName(ref) + "'", op);
    mlir::Location loc = location(value.where());
    mlir::Value contents = mlir::pk::LoadOp::create(
        builder, loc, refType(ref).getTensorType(), refValue(ref));
    mlir::Value updated = mlir::pk::InsertSliceOp::create(
        builder, loc, contents.getType(), stored, contents, part.offsets,
        part.sizes, part.strides);
    mlir::pk::StoreOp::create(builder, loc, updated, refValue(ref));
    hasStore = true;
  }

  /// `value[index]`.
  Value slice(const Operand &value, const Index &index) {
    mlir::Value source = value.getValue().ir();
    ResolvedIndex part = resolveIndex(shapeOf(source), index, "indexing");
    return wrap(mlir::pk::ExtractSliceOp::create(
        builder, location(index.where), tensorType(part.shape, dtypeOf(source)),
        source, part.offsets, part.sizes, part.strides));
  }

  /// `value` (a traced value or a constant array) with leading dimensions
  /// of size 1 dropped, down to `shape`.
  Operand withShape(const Operand &value, const Shape &shape) {
    if (value.getKind() == Operand::Kind::Array) {
      const Operand::ConstantArray &array = value.getArray();
      return Operand::fromArray(array.dtype, shape, array.bytes, value.where());
    }
    mlir::Value source = value.getValue().ir();
    Shape sourceShape = shapeOf(source);
    size_t rank = sourceShape.size();
    llvm::SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    mlir::Value part = mlir::pk::ExtractSliceOp::create(
        builder, location(value.where()), tensorType(shape, dtypeOf(source)),
        source, offsets, sourceShape, strides);
    return Operand(wrap(part), value.where());
  }

  /// `value` checked and converted for a store into `target` (a part of
  /// ref `index` with shape `targetShape`).
  mlir::Value storable(unsigned index, const Operand &value,
                       const Shape &targetShape, const std::string &target,
                       const std::string &op) {
    if (value.getKind() == Operand::Kind::Value)
      owner({&value}, op);
    else
      checkOpen(op, value.where());
    mlir::pk::RefType ref = refType(index);
    Shape valueShape = shapeOf(value);
    // NumPy's assignment drops leading dimensions of size 1 that the target
    // lacks (a (1, 3) value fits a (3,) slice).
    if (valueShape.size() > targetShape.size() &&
        llvm::all_of(llvm::ArrayRef<int64_t>(valueShape)
                         .take_front(valueShape.size() - targetShape.size()),
                     [](int64_t dim) { return dim == 1; })) {
      Shape kept(valueShape.end() - targetShape.size(), valueShape.end());
      return storable(index, withShape(value, kept), targetShape, target, op);
    }
    // `o[...] = v` broadcasts v to o's shape, never the other way round.
    if (!broadcastsTo(valueShape, targetShape))
      fail(value.where(), op,
           "a value of shape " + formatShape(valueShape) +
               " cannot be stored into " + target + " of shape " +
               formatShape(targetShape));
    // The value is converted to o's dtype when NumPy's "same_kind" casting
    // allows it (as ufuncs writing to out= do): never float -> int or
    // number -> bool behind the user's back.
    DType refDType = *fromMlirType(ref.getElementType());
    std::optional<DType> valueType = arrayType(value);
    DType from = valueType ? *valueType : weakType(value);
    if (!canCastSameKind(from, refDType))
      fail(value.where(), op,
           "cannot store " + quoted(from) + " values into ref '" +
               argName(index) + "' of dtype " + quoted(refDType) +
               " (NumPy's same_kind casting); convert explicitly with cast",
           TraceError::Category::Type);
    return materialize(value, refDType, targetShape, op);
  }

  //===--------------------------------------------------------------------===//
  // End of the trace
  //===--------------------------------------------------------------------===//

  mlir::OwningOpRef<mlir::ModuleOp> finish(const SourceLoc &where) {
    checkOpen("trace", where);
    open = false;
    if (!hasStore)
      fail(where, "trace",
           "kernel '" + name +
               "' stores to no ref: a kernel must write its result "
               "(ref[pk::all] = value)");
    mlir::pk::ReturnOp::create(builder, kernelLoc);
    // Values the kernel computed but never used (including the load made by
    // `ref[pk::all]` on the left of an assignment) are dropped.
    for (mlir::Operation &op :
         llvm::make_early_inc_range(llvm::reverse(body().getOperations())))
      if (mlir::isOpTriviallyDead(&op))
        op.erase();

    DiagnosticCollector diagnostics(builder.getContext());
    if (mlir::failed(mlir::verify(*module)))
      fail(where, "trace",
           "internal error: the traced kernel does not verify:\n" +
               diagnostics.text());
    return std::move(module);
  }

  void abandon() {
    open = false;
    module = nullptr;
  }

private:
  mlir::Block &body() { return kernel.getBody().front(); }

  std::string name;
  mlir::OpBuilder builder;
  mlir::Location kernelLoc = builder.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::pk::KernelOp kernel;
  std::vector<std::string> refNames; // per parameter
  std::vector<unsigned> refArg;      // parameter -> kernel argument
  bool open = true;
  bool hasStore = false;
};

} // namespace detail

using detail::BinaryKind;
using detail::CompareKind;
using detail::TraceState;

//===----------------------------------------------------------------------===//
// Operand, Value, Ref, RefElement
//===----------------------------------------------------------------------===//

Operand Operand::fromBool(bool number, SourceLoc where) {
  Operand operand(Kind::Bool, std::move(where));
  operand.intValue = number;
  return operand;
}

Operand Operand::fromInteger(int64_t number, SourceLoc where) {
  Operand operand(Kind::Integer, std::move(where));
  operand.intValue = number;
  return operand;
}

Operand Operand::fromBigInteger(double number, SourceLoc where) {
  Operand operand(Kind::Integer, std::move(where));
  operand.bigInteger = true;
  operand.floatValue = number;
  return operand;
}

Operand Operand::fromUnsignedBigInteger(uint64_t number, SourceLoc where) {
  Operand operand = fromBigInteger(double(number), std::move(where));
  operand.unsignedBig = true;
  operand.intValue = int64_t(number);
  return operand;
}

Operand Operand::fromArray(DType dtype, Shape shape, std::vector<uint8_t> bytes,
                           SourceLoc where) {
  int64_t elements = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      throw TraceError("constant: array of shape " +
                           formatShape(shape) +
                           " has a negative dimension",
                       where);
    elements *= dim;
  }
  if (bytes.size() != size_t(elements) * itemSize(dtype))
    throw TraceError("constant: " + std::to_string(bytes.size()) +
                         " bytes do not hold an array of shape " +
                         formatShape(shape) + " and dtype " +
                         std::string(dtypeName(dtype)),
                     where);
  Operand operand(Kind::Array, std::move(where));
  operand.array = std::make_shared<const ConstantArray>(
      ConstantArray{dtype, std::move(shape), std::move(bytes)});
  return operand;
}

Operand Operand::fromFloat(double number, SourceLoc where) {
  Operand operand(Kind::Float, std::move(where));
  operand.floatValue = number;
  return operand;
}

Shape Value::shape(std::source_location where) const {
  Operand self(*this, where);
  TraceState::owner({&self}, "shape");
  return TraceState::shapeOf(value);
}

DType Value::dtype(std::source_location where) const {
  Operand self(*this, where);
  TraceState::owner({&self}, "dtype");
  return TraceState::dtypeOf(value);
}

Value Value::operator[](const Index &index) const {
  Operand self(*this, index.where);
  return TraceState::owner({&self}, "indexing").slice(self, index);
}

RefElement Ref::operator[](const WholeArray &index) const {
  Value loaded = state->load(this->index, index.where);
  return RefElement(std::move(loaded), state, this->index, nullptr);
}

RefElement Ref::operator[](const Index &index) const {
  return RefElement(load(index), state, this->index,
                    std::make_shared<const Index>(index));
}

Value Ref::load(const Index &index) const {
  return state->load(this->index, index.where)[index];
}

void Ref::store(const Index &index, const Operand &value) const {
  state->store(this->index, index, value);
}

Value Ref::load(std::source_location where) const {
  return state->load(index, SourceLoc::current(where));
}

Value Ref::load(const SourceLoc &where) const {
  return state->load(index, where);
}

void Ref::store(const Operand &value) const { state->store(index, value); }

const std::string &Ref::name() const { return state->argName(index); }

Shape Ref::shape() const {
  auto shape = state->refType(index).getShape();
  return Shape(shape.begin(), shape.end());
}

DType Ref::dtype() const {
  return *fromMlirType(state->refType(index).getElementType());
}

void RefElement::store(const Operand &value) const {
  if (part)
    owner->store(ref, *part, value);
  else
    owner->store(ref, value);
}

void RefElement::operator=(const Operand &stored) && { store(stored); }

/// `ref[i] op= rhs` stores `ref[i] op rhs`, located at `rhs`.
static Operand combined(const Value &current, BinaryKind kind,
                        const Operand &rhs) {
  Operand lhs(current, rhs.where());
  TraceState &owner = TraceState::owner({&lhs, &rhs}, "store");
  return Operand(owner.binary(kind, lhs, rhs), rhs.where());
}

void RefElement::operator+=(const Operand &rhs) && {
  store(combined(*this, BinaryKind::Add, rhs));
}
void RefElement::operator-=(const Operand &rhs) && {
  store(combined(*this, BinaryKind::Sub, rhs));
}
void RefElement::operator*=(const Operand &rhs) && {
  store(combined(*this, BinaryKind::Mul, rhs));
}
void RefElement::operator/=(const Operand &rhs) && {
  store(combined(*this, BinaryKind::Div, rhs));
}
void RefElement::operator%=(const Operand &rhs) && {
  store(combined(*this, BinaryKind::Rem, rhs));
}

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

static Value binary(BinaryKind kind, const Operand &lhs, const Operand &rhs) {
  return TraceState::owner({&lhs, &rhs}, binaryName(kind))
      .binary(kind, lhs, rhs);
}

Value operator+(const Operand &lhs, const Operand &rhs) {
  return binary(BinaryKind::Add, lhs, rhs);
}
Value operator-(const Operand &lhs, const Operand &rhs) {
  return binary(BinaryKind::Sub, lhs, rhs);
}
Value operator*(const Operand &lhs, const Operand &rhs) {
  return binary(BinaryKind::Mul, lhs, rhs);
}
Value operator/(const Operand &lhs, const Operand &rhs) {
  return binary(BinaryKind::Div, lhs, rhs);
}
Value operator%(const Operand &lhs, const Operand &rhs) {
  return binary(BinaryKind::Rem, lhs, rhs);
}
Value floorDivide(const Operand &lhs, const Operand &rhs) {
  return binary(BinaryKind::FloorDiv, lhs, rhs);
}

static Value compare(CompareKind kind, const Operand &lhs,
                     const Operand &rhs) {
  return TraceState::owner({&lhs, &rhs}, "compare").compare(kind, lhs, rhs);
}

Value operator<(const Operand &lhs, const Operand &rhs) {
  return compare(CompareKind::Lt, lhs, rhs);
}
Value operator<=(const Operand &lhs, const Operand &rhs) {
  return compare(CompareKind::Le, lhs, rhs);
}
Value operator>(const Operand &lhs, const Operand &rhs) {
  return compare(CompareKind::Gt, lhs, rhs);
}
Value operator>=(const Operand &lhs, const Operand &rhs) {
  return compare(CompareKind::Ge, lhs, rhs);
}
Value operator==(const Operand &lhs, const Operand &rhs) {
  return compare(CompareKind::Eq, lhs, rhs);
}
Value operator!=(const Operand &lhs, const Operand &rhs) {
  return compare(CompareKind::Ne, lhs, rhs);
}

Value maximum(const Operand &lhs, const Operand &rhs) {
  return binary(BinaryKind::Max, lhs, rhs);
}
Value minimum(const Operand &lhs, const Operand &rhs) {
  return binary(BinaryKind::Min, lhs, rhs);
}

Value math(MathFunction function, const Operand &value) {
  if (value.getKind() != Operand::Kind::Value &&
      value.getKind() != Operand::Kind::Array)
    throw TraceError("math: the function takes a traced value; compute with "
                     "C++ numbers in C++",
                     value.where(), TraceError::Category::Type);
  return TraceState::owner({&value}, "math").mathFunction(function, value);
}

Value pow(const Operand &base, const Operand &exponent) {
  return TraceState::owner({&base, &exponent}, "power")
      .power(base, exponent, /*inPlace=*/false);
}

Value powInPlace(const Operand &base, const Operand &exponent) {
  return TraceState::owner({&base, &exponent}, "power")
      .power(base, exponent, /*inPlace=*/true);
}

static Value reduce(int kind, const Operand &value, const Axes &axes,
                    bool keepdims) {
  if (value.getKind() != Operand::Kind::Value)
    throw TraceError("reduce: reductions take a traced value", value.where(),
                     TraceError::Category::Type);
  return TraceState::owner({&value}, "reduce")
      .reduce(TraceState::ReduceKind(kind), value, axes, keepdims);
}

Value sum(const Operand &value, const Axes &axes, bool keepdims) {
  return reduce(0, value, axes, keepdims);
}
Value amax(const Operand &value, const Axes &axes, bool keepdims) {
  return reduce(1, value, axes, keepdims);
}
Value amin(const Operand &value, const Axes &axes, bool keepdims) {
  return reduce(2, value, axes, keepdims);
}
Value mean(const Operand &value, const Axes &axes, bool keepdims) {
  return reduce(3, value, axes, keepdims);
}

Value abs(const Operand &value) {
  if (value.getKind() != Operand::Kind::Value)
    throw TraceError("abs: pk::abs takes a traced value", value.where(),
                     TraceError::Category::Type);
  return TraceState::owner({&value}, "abs").absolute(value);
}

Value where(const Operand &condition, const Operand &a, const Operand &b) {
  return TraceState::owner({&condition, &a, &b}, "where")
      .select(condition, a, b);
}

Value operator-(const Operand &operand) {
  return TraceState::owner({&operand}, "negative").negate(operand);
}

Value matmul(const Operand &lhs, const Operand &rhs) {
  return TraceState::owner({&lhs, &rhs}, "matmul").matmul(lhs, rhs);
}

Value cast(const Operand &value, DType dtype) {
  if (value.getKind() != Operand::Kind::Value)
    throw TraceError("cast: pk::cast converts traced values; write "
                     "pk::typed(number, dtype) for a typed number",
                     value.where());
  return TraceState::owner({&value}, "cast").cast(value, dtype);
}

Operand typed(const Operand &number, DType dtype) {
  if (number.getKind() == Operand::Kind::Value ||
      number.getKind() == Operand::Kind::Array)
    throw TraceError("typed: pk::typed takes a C++ number; use pk::cast to "
                     "convert a traced value",
                     number.where());
  Operand result = number;
  result.fixedType = dtype;
  return result;
}

//===----------------------------------------------------------------------===//
// Tracer
//===----------------------------------------------------------------------===//

Tracer::Tracer(mlir::MLIRContext &context, std::string name,
               const Signature &signature, SourceLoc where)
    : state(std::make_shared<TraceState>(context, std::move(name), signature,
                                         where)),
      location(std::move(where)) {
  for (unsigned i = 0; i < signature.size(); ++i)
    parameters.push_back(Ref(state, i));
}

Tracer::~Tracer() { abandon(); }

mlir::OwningOpRef<mlir::ModuleOp> Tracer::finish() {
  return state->finish(location);
}

void Tracer::abandon() { state->abandon(); }

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

std::string printModule(mlir::ModuleOp module, bool withLocations) {
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  flags.printNameLocAsPrefix(true);
  if (withLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/true);
  module->print(os, flags);
  return text;
}

} // namespace pk
