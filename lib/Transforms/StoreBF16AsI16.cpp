//===- StoreBF16AsI16.cpp - bfloat16 arrays as 16-bit integers ------------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKSTOREBF16ASI16
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// bf16, and shaped types of it, become i16 of the same shape.
class BF16AsI16 : public TypeConverter {
public:
  explicit BF16AsI16(MLIRContext *context) {
    Type i16 = IntegerType::get(context, 16);
    addConversion([](Type type) { return type; });
    addConversion([i16](BFloat16Type) { return i16; });
    addConversion([i16](ShapedType type) -> Type {
      if (!type.getElementType().isBF16())
        return type;
      return type.clone(i16);
    });
  }

  /// The attribute with bf16 retyped: constants keep their bits.
  Attribute convert(Attribute attr) const {
    if (auto elements = dyn_cast<DenseElementsAttr>(attr))
      if (elements.getElementType().isBF16())
        return elements.bitcast(IntegerType::get(attr.getContext(), 16));
    if (auto number = dyn_cast<FloatAttr>(attr))
      if (number.getType().isBF16())
        return IntegerAttr::get(IntegerType::get(attr.getContext(), 16),
                                number.getValue().bitcastToAPInt());
    if (auto type = dyn_cast<TypeAttr>(attr))
      return TypeAttr::get(convertType(type.getValue()));
    return attr;
  }

  bool isLegal(Operation *op) const {
    auto legalAttr = [&](NamedAttribute attr) {
      return convert(attr.getValue()) == attr.getValue();
    };
    auto legalRegion = [&](Region &region) {
      return llvm::all_of(region.getArguments(), [&](BlockArgument arg) {
        return TypeConverter::isLegal(arg.getType());
      });
    };
    if (auto function = dyn_cast<FunctionOpInterface>(op))
      if (!TypeConverter::isLegal(function.getArgumentTypes()) ||
          !TypeConverter::isLegal(function.getResultTypes()))
        return false;
    return TypeConverter::isLegal(op) &&
           llvm::all_of(op->getAttrs(), legalAttr) &&
           llvm::all_of(op->getRegions(), legalRegion);
  }
};

/// Any operation, retyped: results, region arguments and attributes.
struct RetypeOperation : public ConversionPattern {
  RetypeOperation(const BF16AsI16 &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1,
                          context),
        converter(converter) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (isa<FunctionOpInterface>(op))
      return failure(); // signatures: the function patterns below
    SmallVector<Type> resultTypes;
    if (failed(converter.convertTypes(op->getResultTypes(), resultTypes)))
      return failure();
    OperationState state(op->getLoc(), op->getName(), operands, resultTypes);
    for (NamedAttribute attr : op->getAttrs())
      state.addAttribute(attr.getName(), converter.convert(attr.getValue()));
    for (Region &region : op->getRegions()) {
      Region *converted = state.addRegion();
      rewriter.inlineRegionBefore(region, *converted, converted->end());
      if (failed(rewriter.convertRegionTypes(converted, converter)))
        return failure();
    }
    state.addSuccessors(op->getSuccessors());
    rewriter.replaceOp(op, rewriter.create(state)->getResults());
    return success();
  }

  const BF16AsI16 &converter;
};

struct StoreBF16AsI16Pass
    : public mlir::pk::impl::PkStoreBF16AsI16Base<StoreBF16AsI16Pass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    BF16AsI16 converter(context);
    ConversionTarget target(*context);
    target.markUnknownOpDynamicallyLegal(
        [&](Operation *op) { return converter.isLegal(op); });
    RewritePatternSet patterns(context);
    patterns.add<RetypeOperation>(converter, context);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateFunctionOpInterfaceTypeConversionPattern<gpu::GPUFuncOp>(patterns,
                                                                     converter);
    if (failed(
            applyFullConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
