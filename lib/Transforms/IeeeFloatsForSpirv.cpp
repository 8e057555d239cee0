//===- IeeeFloatsForSpirv.cpp - IEEE float semantics on Vulkan ------------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/IR/Matchers.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKIEEEFLOATSFORSPIRV
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

struct IeeeFloatsForSpirvPass
    : public mlir::pk::impl::PkIeeeFloatsForSpirvBase<IeeeFloatsForSpirvPass> {
  using PkIeeeFloatsForSpirvBase::PkIeeeFloatsForSpirvBase;

  void runOnOperation() override {
    spirv::ModuleOp module = getOperation();
    for (unsigned width : widths)
      if (width != 16 && width != 32 && width != 64) {
        module.emitError("pk-ieee-floats-for-spirv: float width ")
            << width << " is not 16, 32 or 64";
        return signalPassFailure();
      }
    OpBuilder builder(module.getContext());
    for (auto entry : llvm::to_vector(module.getOps<spirv::EntryPointOp>())) {
      auto function =
          module.lookupSymbol<spirv::FuncOp>(entry.getFnAttr().getValue());
      builder.setInsertionPointAfter(entry);
      for (unsigned width : widths)
        spirv::ExecutionModeOp::create(
            builder, entry.getLoc(), function,
            spirv::ExecutionMode::SignedZeroInfNanPreserve, {int32_t(width)});
    }
    // Division by a constant zero is multiplication by an infinity of the
    // same sign, for every dividend (x / 0 is +-inf, 0 / 0 and NaN / 0 are
    // NaN, as 0 * inf and NaN * inf are); lavapipe folded the division to
    // garbage despite the execution mode.
    module.walk([&](spirv::FDivOp divide) {
      FloatAttr zero;
      if (!matchPattern(divide.getOperand2(), m_Constant(&zero)) ||
          !zero.getValue().isZero())
        return;
      builder.setInsertionPoint(divide);
      APFloat infinity = APFloat::getInf(zero.getValue().getSemantics(),
                                         zero.getValue().isNegative());
      Value factor = spirv::ConstantOp::create(
          builder, divide.getLoc(), zero.getType(),
          builder.getFloatAttr(zero.getType(), infinity));
      Value product = spirv::FMulOp::create(builder, divide.getLoc(),
                                            divide.getOperand1(), factor);
      divide.replaceAllUsesWith(product);
      divide.erase();
    });
    opaqueZeros(module, builder);
    // The serializer turns the unit attribute into the decoration.
    module.walk([&](Operation *op) {
      if (isa<spirv::FAddOp, spirv::FSubOp, spirv::FMulOp, spirv::FDivOp,
              spirv::FRemOp, spirv::FModOp, spirv::FNegateOp>(op))
        op->setAttr("no_contraction", builder.getUnitAttr());
    });
  }

  /// Float zeros are read from a push constant (the runtime pushes 0.0f),
  /// which no driver can fold: Mesa's NIR turned `x * 0.0` into 0 and
  /// `x + 0.0` into x, decorations and execution modes notwithstanding
  /// (wrong for infinite, NaN and -0.0 x), also when the zero came out of
  /// a select (`x / (x < x)`, a bool turned float).
  void opaqueZeros(spirv::ModuleOp module, OpBuilder &builder) {
    MLIRContext *context = module.getContext();
    Type f32 = Float32Type::get(context);
    spirv::GlobalVariableOp zeroVariable;
    for (auto function : module.getOps<spirv::FuncOp>()) {
      SmallVector<std::pair<OpOperand *, spirv::ConstantOp>> uses;
      function.walk([&](spirv::ConstantOp constant) {
        auto value = dyn_cast<FloatAttr>(constant.getValue());
        if (!value || !value.getValue().isZero())
          return;
        for (OpOperand &use : constant->getUses())
          uses.push_back({&use, constant});
      });
      if (uses.empty())
        continue;
      Location loc = function.getLoc();
      if (!zeroVariable) {
        builder.setInsertionPointToStart(module.getBody());
        auto block = spirv::StructType::get({f32}, {0});
        zeroVariable = spirv::GlobalVariableOp::create(
            builder, loc,
            spirv::PointerType::get(block, spirv::StorageClass::PushConstant),
            "__pk_float_zero");
      }
      builder.setInsertionPointToStart(&function.front());
      Value address = spirv::AddressOfOp::create(builder, loc, zeroVariable);
      Value member = spirv::ConstantOp::create(
          builder, loc, builder.getI32Type(), builder.getI32IntegerAttr(0));
      Value pointer = spirv::AccessChainOp::create(builder, loc, address,
                                                   ValueRange{member});
      Value zero = spirv::LoadOp::create(builder, loc, pointer);
      // -0.0 is the negated zero; other widths convert it.
      DenseMap<std::pair<Type, unsigned>, Value> zeros;
      for (auto [use, constant] : uses) {
        auto value = cast<FloatAttr>(constant.getValue());
        bool negative = value.getValue().isNegative();
        Value &replacement = zeros[{value.getType(), unsigned(negative)}];
        if (!replacement) {
          builder.setInsertionPointAfter(zero.getDefiningOp());
          replacement = zero;
          if (value.getType() != f32)
            replacement =
                spirv::FConvertOp::create(builder, loc, value.getType(), zero);
          if (negative)
            replacement = spirv::FNegateOp::create(builder, loc, replacement);
        }
        use->set(replacement);
      }
    }
  }
};

} // namespace
