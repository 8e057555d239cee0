//===- Trace.cpp - the C++ tracing frontend -------------------------------===//
//
// Each trace owns a TraceState: the module being built, a builder positioned
// in the kernel body, and the open flag that makes values unusable once
// their trace has ended. The operators only convert operands; NumPy's rules
// (promotion, weak scalars, broadcasting, matmul shapes) are applied here,
// so that the IR below the frontend is explicit.
//
//===----------------------------------------------------------------------===//

#include "TraceState.h"

#include "picokernel/Frontend/Generalize.h"

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

TraceAbort::~TraceAbort() = default;

namespace {
thread_local uint64_t errorsReported = 0;
} // namespace

uint64_t detail::traceErrorsReported() { return errorsReported; }
void detail::noteTraceError() { ++errorsReported; }

TraceError::TraceError(const std::string &message, SourceLoc where,
                       Category category)
    : std::runtime_error(
          where.file.empty() ? message : where.str() + ": error: " + message),
      location(std::move(where)), text(message), kind(category) {
  detail::noteTraceError();
}

void detail::throwArityMismatch(const std::string &name, size_t takes,
                                size_t given, const SourceLoc &where) {
  throw TraceError("trace: kernel '" + name + "' takes " +
                       std::to_string(takes) +
                       " refs but the signature describes " +
                       std::to_string(given) + " arrays",
                   where);
}

using namespace detail;

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
      throw TraceError("constant: array of shape " + formatShape(shape) +
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

/// `build` run at the end of the kernel body of the open trace that owns
/// `operands`, its result a value of that trace.
template <typename Build>
static Value traced(std::initializer_list<const Operand *> operands,
                    const std::string &op, Build build) {
  TraceState &state = TraceState::owner(operands, op);
  return state.wrap(build(state.opBuilder()));
}

Shape Value::shape(std::source_location where) const {
  Operand self(*this, where);
  TraceState::owner({&self}, "shape").sizesRead = true;
  return shapeOf(irOf(*this));
}

size_t Value::ndim(std::source_location where) const {
  Operand self(*this, where);
  TraceState::owner({&self}, "ndim");
  return mlir::cast<mlir::ShapedType>(irOf(*this).getType()).getRank();
}

DType Value::dtype(std::source_location where) const {
  Operand self(*this, where);
  TraceState::owner({&self}, "dtype");
  return dtypeOf(irOf(*this));
}

Value Value::operator[](const Index &index) const {
  Operand self(*this, index.where);
  return traced({&self}, "indexing", [&](mlir::OpBuilder &builder) {
    return buildSlice(builder, self, index);
  });
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

size_t Ref::ndim() const { return state->refType(index).getRank(); }

Shape Ref::shape() const {
  state->sizesRead = true;
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
  return Operand(traced({&lhs, &rhs}, "store",
                        [&](mlir::OpBuilder &builder) {
                          return buildBinary(builder, kind, lhs, rhs);
                        }),
                 rhs.where());
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
  return traced({&lhs, &rhs}, binaryName(kind), [&](mlir::OpBuilder &builder) {
    return buildBinary(builder, kind, lhs, rhs);
  });
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

static Value compare(CompareKind kind, const Operand &lhs, const Operand &rhs) {
  return traced({&lhs, &rhs}, "compare", [&](mlir::OpBuilder &builder) {
    return buildCompare(builder, kind, lhs, rhs);
  });
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
  return traced({&value}, "math", [&](mlir::OpBuilder &builder) {
    return buildMathFunction(builder, function, value);
  });
}

Value pow(const Operand &base, const Operand &exponent) {
  return traced({&base, &exponent}, "power", [&](mlir::OpBuilder &builder) {
    return buildPower(builder, base, exponent, /*inPlace=*/false);
  });
}

Value powInPlace(const Operand &base, const Operand &exponent) {
  return traced({&base, &exponent}, "power", [&](mlir::OpBuilder &builder) {
    return buildPower(builder, base, exponent, /*inPlace=*/true);
  });
}

static Value reduce(ReduceKind kind, const Operand &value, const Axes &axes,
                    bool keepdims) {
  if (value.getKind() != Operand::Kind::Value)
    throw TraceError("reduce: reductions take a traced value", value.where(),
                     TraceError::Category::Type);
  return traced({&value}, "reduce", [&](mlir::OpBuilder &builder) {
    return buildReduce(builder, kind, value, axes, keepdims);
  });
}

Value sum(const Operand &value, const Axes &axes, bool keepdims) {
  return reduce(ReduceKind::Sum, value, axes, keepdims);
}
Value amax(const Operand &value, const Axes &axes, bool keepdims) {
  return reduce(ReduceKind::Max, value, axes, keepdims);
}
Value amin(const Operand &value, const Axes &axes, bool keepdims) {
  return reduce(ReduceKind::Min, value, axes, keepdims);
}
Value mean(const Operand &value, const Axes &axes, bool keepdims) {
  return reduce(ReduceKind::Mean, value, axes, keepdims);
}

Value abs(const Operand &value) {
  if (value.getKind() != Operand::Kind::Value)
    throw TraceError("abs: pk::abs takes a traced value", value.where(),
                     TraceError::Category::Type);
  return traced({&value}, "abs", [&](mlir::OpBuilder &builder) {
    return buildAbsolute(builder, value);
  });
}

Value where(const Operand &condition, const Operand &a, const Operand &b) {
  return traced({&condition, &a, &b}, "where", [&](mlir::OpBuilder &builder) {
    return buildSelect(builder, condition, a, b);
  });
}

Value operator-(const Operand &operand) {
  return traced({&operand}, "negative", [&](mlir::OpBuilder &builder) {
    return buildNegate(builder, operand);
  });
}

Value matmul(const Operand &lhs, const Operand &rhs) {
  return traced({&lhs, &rhs}, "matmul", [&](mlir::OpBuilder &builder) {
    return buildMatmul(builder, lhs, rhs);
  });
}

Value cast(const Operand &value, DType dtype) {
  if (value.getKind() != Operand::Kind::Value)
    throw TraceError("cast: pk::cast converts traced values; write "
                     "pk::typed(number, dtype) for a typed number",
                     value.where());
  return traced({&value}, "cast", [&](mlir::OpBuilder &builder) {
    return buildCast(builder, value, dtype);
  });
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

Tracer::Tracer(std::string name, const Signature &signature, SourceLoc where,
               TraceContext context)
    : location(std::move(where)), errorsAtStart(detail::traceErrorsReported()) {
  std::shared_ptr<mlir::MLIRContext> own;
  mlir::MLIRContext &traceContext = contextFor(context, own);
  state = startTrace(traceContext, std::move(name), signature, location).state;
  state->ownContext = std::move(own);
  for (unsigned i = 0; i < signature.size(); ++i)
    parameters.push_back(Ref(state, i));
}

Tracer::Tracer(StartedTrace started, SourceLoc where)
    : state(std::move(started.state)), location(std::move(where)),
      errorsAtStart(detail::traceErrorsReported()) {
  for (unsigned i = 0; i < state->numRefs(); ++i)
    parameters.push_back(Ref(state, i));
}

Tracer::~Tracer() { abandon(); }

bool Tracer::readSizes() const {
  return state->sizesRead || detail::traceErrorsReported() != errorsAtStart;
}

Module Tracer::finish(bool forGeneralizing) {
  mlir::OwningOpRef<mlir::ModuleOp> module = state->finish(location);
  if (!forGeneralizing)
    dropRecordedIndices(*module);
  return wrapModule(std::move(module), state->ownContext);
}

void Tracer::abandon() { state->abandon(); }

} // namespace pk
