//===- TraceState.cpp - parameters, loads, stores, ownership -------------===//

#include "TraceState.h"

namespace pk {
namespace detail {

TraceState::TraceState(mlir::MLIRContext &context, std::string kernelName,
                       const Signature &signature, const SourceLoc &where)
    : name(std::move(kernelName)), builder(&context) {
  context.loadDialect<mlir::pk::PkDialect>();
  checkName("kernel", name, where);
  for (const ArgSpec &arg : signature)
    checkName("parameter", arg.name, where, /*mayBeEmpty=*/true);
  kernelLoc = location(builder, where);
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
             "parameter '" + argName +
                 "' is declared the same array as "
                 "parameter #" +
                 std::to_string(arg.aliasOf) +
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

void TraceState::checkName(const std::string &what, const std::string &name,
                           const SourceLoc &where, bool mayBeEmpty) {
  // The location may hold the name itself (a kernel's default one does).
  bool locationHasNul = where.file.find('\0') != std::string::npos;
  if ((!mayBeEmpty && name.empty()) || name.find('\0') != std::string::npos)
    fail(locationHasNul ? SourceLoc() : where, "trace",
         "a " + what + " name must be " +
             (mayBeEmpty ? "" : "a non-empty string ") +
             "without NUL characters; got '" +
             llvm::join(llvm::split(name, '\0'), "\\0") + "'");
}

mlir::BlockArgument TraceState::refValue(unsigned index) {
  return body().getArgument(refArg[index]);
}

mlir::pk::RefType TraceState::refType(unsigned index) {
  checkOpen("use of ref '" + argName(index) + "'", SourceLoc());
  return llvm::cast<mlir::pk::RefType>(refValue(index).getType());
}

std::shared_ptr<TraceState> &TraceState::stateOf(const Value &value) {
  return const_cast<Value &>(value).state;
}

void TraceState::checkOpen(const std::string &op,
                           const SourceLoc &where) const {
  if (!open)
    fail(where, op,
         "kernel '" + name +
             "' is no longer being traced: its values and refs cannot be "
             "used after the trace ended");
}

TraceState &TraceState::owner(std::initializer_list<const Operand *> operands,
                              const std::string &op) {
  TraceState *state = nullptr;
  for (const Operand *operand : operands) {
    if (operand->getKind() != Operand::Kind::Value)
      continue;
    TraceState *candidate = stateOf(operand->getValue()).get();
    if (!candidate || !irOf(operand->getValue()))
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

Value TraceState::load(unsigned index, const SourceLoc &where) {
  checkOpen("load of '" + argName(index) + "'", where);
  return wrap(mlir::pk::LoadOp::create(builder, location(builder, where),
                                       refType(index).getTensorType(),
                                       refValue(index)));
}

void TraceState::store(unsigned index, const Operand &value) {
  std::string op = "store to '" + argName(index) + "'";
  checkOpen(op, value.where());
  mlir::pk::RefType ref = refType(index);
  Shape refShape(ref.getShape().begin(), ref.getShape().end());
  mlir::Value stored =
      storable(index, value, refShape, "ref '" + argName(index) + "'", op);
  mlir::pk::StoreOp::create(builder, location(builder, value.where()), stored,
                            refValue(index));
  hasStore = true;
}

void TraceState::store(unsigned ref, const Index &index, const Operand &value) {
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
      !(oneElement &&
        *fromMlirType(refType(ref).getElementType()) == DType::Bool))
    fail(value.where(), op,
         "setting an array element with a sequence: ref '" + argName(ref) +
             "'[...] with an integer per dimension is one element, but the "
             "value has shape " +
             formatShape(valueShape));
  mlir::Value stored = storable(ref, value, part.shape,
                                "a slice of ref '" + argName(ref) + "'", op);
  mlir::Location loc = location(builder, value.where());
  mlir::Value contents = mlir::pk::LoadOp::create(
      builder, loc, refType(ref).getTensorType(), refValue(ref));
  auto updated = mlir::pk::InsertSliceOp::create(
      builder, loc, contents.getType(), stored, contents, part.offsets,
      part.sizes, part.strides);
  recordIndex(updated, index.items, refShape.size());
  mlir::pk::StoreOp::create(builder, loc, updated, refValue(ref));
  hasStore = true;
}

mlir::Value TraceState::storable(unsigned index, const Operand &value,
                                 const Shape &targetShape,
                                 const std::string &target,
                                 const std::string &op) {
  checkOpen(op, value.where());
  if (value.getKind() == Operand::Kind::Value) {
    TraceState &other = owner({&value}, op);
    if (&other != this)
      fail(value.where(), op,
           "the value stored comes from the trace of kernel '" + other.name +
               "', not from that of kernel '" + name +
               "': a value belongs to the trace that made it");
  }
  mlir::pk::RefType ref = refType(index);
  Shape valueShape = shapeOf(value);
  // NumPy's assignment drops leading dimensions of size 1 that the target
  // lacks (a (1, 3) value fits a (3,) slice).
  if (valueShape.size() > targetShape.size() &&
      llvm::all_of(llvm::ArrayRef<int64_t>(valueShape)
                       .take_front(valueShape.size() - targetShape.size()),
                   [](int64_t dim) { return dim == 1; })) {
    Shape kept(valueShape.end() - targetShape.size(), valueShape.end());
    return storable(index,
                    withShape(builder, value, kept,
                              [&](mlir::Value part) { return wrap(part); }),
                    targetShape, target, op);
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
  // A Python integer stores into any integer ref that holds its value
  // (`uint8_ref[...] = 5`; 256 is an OverflowError when materialized).
  if (!valueType && value.getKind() == Operand::Kind::Integer &&
      isInteger(refDType))
    from = refDType;
  if (!canCastSameKind(from, refDType))
    fail(value.where(), op,
         "cannot store " + quoted(from) + " values into ref '" +
             argName(index) + "' of dtype " + quoted(refDType) +
             " (NumPy's same_kind casting); convert explicitly with cast",
         TraceError::Category::Type);
  return materialize(builder, value, refDType, targetShape, op);
}

mlir::OwningOpRef<mlir::ModuleOp> TraceState::finish(const SourceLoc &where) {
  checkOpen("trace", where);
  open = false;
  if (!hasStore)
    fail(where, "trace",
         "kernel '" + name +
             "' stores to no ref: a kernel must store its result into a "
             "ref (`o[...] = value` in Python, `o[pk::all] = value` in C++)");
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

void TraceState::abandon() {
  open = false;
  module = nullptr;
}

} // namespace detail
} // namespace pk
