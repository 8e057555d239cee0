//===- PkToLinalg.cpp - lower pk kernels to linalg on tensors -------------===//

#include "picokernel/Conversion/PkToLinalg/PkToLinalg.h"
#include "PkToLinalgPatterns.h"
#include "picokernel/Conversion/Passes.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Dialect/Pk/IR/SizeClasses.h"
#include "picokernel/Support/Bufferization.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::pk {
#define GEN_PASS_DEF_CONVERTPKTOLINALG
#include "picokernel/Conversion/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

Type mlir::pk::toSignless(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.isUnsigned()
               ? IntegerType::get(type.getContext(), integer.getWidth())
               : type;
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.clone(toSignless(shaped.getElementType()));
  return type;
}

RankedTensorType mlir::pk::toSignless(RankedTensorType type) {
  return cast<RankedTensorType>(toSignless(Type(type)));
}

PkToLinalgTypeConverter::PkToLinalgTypeConverter() {
  addConversion([](Type type) { return toSignless(type); });
  addConversion([](RefType ref) -> Type {
    return MemRefType::get(ref.getShape(), toSignless(ref.getElementType()));
  });
}

namespace {

//===----------------------------------------------------------------------===//
// Kernel structure and memory
//===----------------------------------------------------------------------===//

struct KernelLowering : public OpConversionPattern<KernelOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(KernelOp kernel, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const TypeConverter &converter = *getTypeConverter();
    Block &body = kernel.getBodyBlock();
    TypeConverter::SignatureConversion signature(body.getNumArguments());
    if (failed(converter.convertSignatureArgs(kernel.getArgumentTypes(),
                                              signature)))
      return rewriter.notifyMatchFailure(kernel, "unconvertible arguments");

    SmallVector<bool> loaded, stored;
    for (BlockArgument ref : body.getArguments()) {
      loaded.push_back(llvm::any_of(ref.getUsers(), llvm::IsaPred<LoadOp>));
      stored.push_back(kernel.isStoredTo(ref.getArgNumber()));
    }

    auto func = func::FuncOp::create(
        rewriter, kernel.getLoc(), kernel.getSymName(),
        rewriter.getFunctionType(signature.getConvertedTypes(), {}));
    // The runtime calls kernels through their C interface.
    func->setAttr("llvm.emit_c_interface", rewriter.getUnitAttr());
    rewriter.inlineRegionBefore(kernel.getBody(), func.getBody(), func.end());
    Block *entry = rewriter.applySignatureConversion(&func.getBody().front(),
                                                     signature, &converter);

    // One tensor per loaded ref, read at entry: pk-forward-stores has made
    // every load precede the stores. A ref the kernel also stores to is
    // writable: one-shot bufferization may then update it in place (a store
    // to a slice writes just the slice) wherever its old contents are not
    // read afterwards. Inputs are never written.
    rewriter.setInsertionPointToStart(entry);
    for (auto [index, isLoaded] : llvm::enumerate(loaded)) {
      if (!isLoaded)
        continue;
      Value memref = entry->getArgument(index);
      auto memrefType = cast<MemRefType>(memref.getType());
      bufferization::ToTensorOp::create(
          rewriter, memref.getLoc(),
          RankedTensorType::get(memrefType.getShape(),
                                memrefType.getElementType()),
          memref, /*restrict=*/rewriter.getUnitAttr(),
          /*writable=*/stored[index] ? rewriter.getUnitAttr() : UnitAttr());
    }
    rewriter.eraseOp(kernel);
    return success();
  }
};

struct ReturnLowering : public OpConversionPattern<ReturnOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReturnOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<func::ReturnOp>(op);
    return success();
  }
};

struct LoadLowering : public OpConversionPattern<LoadOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LoadOp load, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bufferization::ToTensorOp tensor = loadedContents(adaptor.getRef());
    if (!tensor)
      return rewriter.notifyMatchFailure(load, "the kernel was not lowered");
    rewriter.replaceOp(load, tensor.getResult());
    return success();
  }
};

struct StoreLowering : public OpConversionPattern<StoreOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(StoreOp store, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // A ref that is only written is the destination of its value: with
    // `restrict`, empty-tensor elimination computes straight into it. A ref
    // that is also read keeps its contents until the end (no `restrict`):
    // the value is computed aside and copied in.
    bool alsoLoaded = bool(loadedContents(adaptor.getRef()));
    bufferization::MaterializeInDestinationOp::create(
        rewriter, store.getLoc(), /*result=*/Type(), adaptor.getValue(),
        adaptor.getRef(), /*restrict=*/!alsoLoaded, /*writable=*/true);
    rewriter.eraseOp(store);
    return success();
  }
};

struct DimLowering : public OpConversionPattern<DimOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<memref::DimOp>(op, adaptor.getRef(),
                                               op.getIndex());
    return success();
  }
};

/// The product in index arithmetic, then a number of the element type: an
/// integer wraps; a float is the nearest to the count (exact in float64
/// below 2^53, then rounded once), as NumPy converts a count.
struct CountLowering : public OpConversionPattern<CountOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CountOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value count =
        arith::ConstantIndexOp::create(rewriter, loc, int64_t(op.getFactor()));
    for (Value size : adaptor.getSizes())
      count = arith::MulIOp::create(rewriter, loc, count, size);
    Value number =
        arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(), count);
    Type element = toSignless(op.getType().getElementType());
    if (auto real = dyn_cast<FloatType>(element)) {
      number =
          arith::SIToFPOp::create(rewriter, loc, rewriter.getF64Type(), number);
      if (real.getWidth() < 64)
        number = arith::TruncFOp::create(rewriter, loc, real, number);
    } else if (element.getIntOrFloatBitWidth() < 64) {
      number = arith::TruncIOp::create(rewriter, loc, element, number);
    }
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(
        op, toSignless(op.getType()), number);
    return success();
  }
};

struct ConstantLowering : public OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = toSignless(op.getType());
    if (type == op.getType()) {
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type, op.getValue());
      return success();
    }
    // Unsigned integers: the same bits as signless ones.
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense)
      return rewriter.notifyMatchFailure(op, "unsigned constant not dense");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, type, dense.bitcast(type.getElementType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// `a * b` for index sizes, folded where either is a constant.
OpFoldResult multiplySizes(OpBuilder &builder, Location loc, OpFoldResult a,
                           OpFoldResult b) {
  std::optional<int64_t> x = getConstantIntValue(a), y = getConstantIntValue(b);
  if (x && y)
    return builder.getIndexAttr(*x * *y);
  if (x == 1 || y == 1)
    return x == 1 ? b : a;
  return arith::MulIOp::create(builder, loc,
                               getValueOrCreateConstantIndexOp(builder, loc, a),
                               getValueOrCreateConstantIndexOp(builder, loc, b))
      .getResult();
}

/// Refs are C-contiguous arrays, and the sizes of a class are equal: each
/// argument with dynamic sizes is used through a view whose sizes are its
/// classes' (one value per class, the first argument's) and whose strides
/// are computed from them, rather than read from each array's descriptor;
/// the kernel's size reads (memref.dim) become those values. LLVM then
/// sees the rows of every array advance by the same stride: the pointer
/// differences its alias checks test stay the same across rows, and the
/// checks leave the row loops.
void viewArgumentsBySizeClass(func::FuncOp func, const SizeClasses &classes) {
  Block &entry = func.getBody().front();
  OpBuilder builder = OpBuilder::atBlockBegin(&entry);
  Location loc = func.getLoc();
  SmallVector<Value> classSizes(classes.count);
  SmallPtrSet<Operation *, 8> sizeReads;
  for (auto [index, dims] : llvm::enumerate(classes.ofParameter))
    for (auto [d, cls] : llvm::enumerate(dims))
      if (cls >= 0 && classes.isGiven(cls) && !classSizes[cls]) {
        classSizes[cls] = memref::DimOp::create(
            builder, loc, entry.getArgument(index), int64_t(d));
        sizeReads.insert(classSizes[cls].getDefiningOp());
      }
  // A derived class's size is computed from its base's (the caller
  // checked that the arrays have it).
  for (auto [cls, derived] : llvm::enumerate(classes.derived))
    if (derived)
      classSizes[cls] = buildSliceSize(builder, loc, classSizes[derived->base],
                                       derived->offset, derived->step);
  for (auto [index, dims] : llvm::enumerate(classes.ofParameter)) {
    BlockArgument array = entry.getArgument(index);
    auto type = cast<MemRefType>(array.getType());
    SmallVector<OpFoldResult> sizes, strides(dims.size());
    for (auto [d, cls] : llvm::enumerate(dims))
      sizes.push_back(cls >= 0 ? OpFoldResult(classSizes[cls])
                               : builder.getIndexAttr(type.getDimSize(d)));
    OpFoldResult stride = builder.getIndexAttr(1);
    for (size_t d = dims.size(); d-- > 0;) {
      strides[d] = stride;
      if (d > 0)
        stride = multiplySizes(builder, loc, stride, sizes[d]);
    }
    // A view adds nothing where the sizes past the first are static (the
    // type has the strides) and the first is static or the array's own.
    Value used = array;
    auto read = dims.empty() || dims[0] < 0
                    ? memref::DimOp()
                    : classSizes[dims[0]].getDefiningOp<memref::DimOp>();
    bool ownSizes =
        llvm::all_of(llvm::drop_begin(dims), [](int cls) { return cls < 0; }) &&
        (dims.empty() || dims[0] < 0 || (read && read.getSource() == array));
    if (!ownSizes) {
      auto view = memref::ReinterpretCastOp::create(
          builder, loc, type, array, builder.getIndexAttr(0), sizes, strides);
      SmallPtrSet<Operation *, 8> except = sizeReads;
      except.insert(view);
      array.replaceAllUsesExcept(view, except);
      used = view;
    }
    for (Operation *user : llvm::make_early_inc_range(used.getUsers())) {
      auto dim = dyn_cast<memref::DimOp>(user);
      std::optional<int64_t> d = dim ? dim.getConstantIndex() : std::nullopt;
      if (!d || sizeReads.contains(dim) || *d >= int64_t(sizes.size()))
        continue;
      dim.replaceAllUsesWith(
          getValueOrCreateConstantIndexOp(builder, loc, sizes[*d]));
      dim.erase();
    }
  }
}

struct ConvertPkToLinalgPass
    : public mlir::pk::impl::ConvertPkToLinalgBase<ConvertPkToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    llvm::StringMap<SizeClasses> classes;
    getOperation()->walk([&](KernelOp kernel) {
      if (llvm::any_of(kernel.getArgumentTypes(), [](Type type) {
            return ShapedType::isDynamicShape(cast<RefType>(type).getShape());
          }))
        classes[kernel.getSymName()] = computeSizeClasses(kernel);
    });
    PkToLinalgTypeConverter typeConverter;
    RewritePatternSet patterns(context);
    populatePkToLinalgConversionPatterns(typeConverter, patterns);

    ConversionTarget target(*context);
    target.addIllegalDialect<PkDialect>();
    target.addLegalDialect<
        arith::ArithDialect, bufferization::BufferizationDialect,
        func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
        memref::MemRefDialect, tensor::TensorDialect>();
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
    getOperation()->walk([&](func::FuncOp func) {
      auto found = classes.find(func.getSymName());
      if (found != classes.end() && !func.isExternal())
        viewArgumentsBySizeClass(func, found->second);
    });
  }
};

} // namespace

void mlir::pk::populatePkKernelAndMemoryConversionPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  patterns.add<KernelLowering, ReturnLowering, LoadLowering, StoreLowering,
               DimLowering, CountLowering, ConstantLowering>(
      typeConverter, patterns.getContext());
}

void mlir::pk::populatePkToLinalgConversionPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  populatePkKernelAndMemoryConversionPatterns(typeConverter, patterns);
  populatePkElementwiseConversionPatterns(typeConverter, patterns);
  populatePkReductionConversionPatterns(typeConverter, patterns);
  populatePkMatmulConversionPatterns(typeConverter, patterns);
  populatePkSliceConversionPatterns(typeConverter, patterns);
}
