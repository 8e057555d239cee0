//===- LowerLinalgToLoops.cpp - loops, parallel when large ----------------===//

#include "picokernel/Transforms/Passes.h"

#include "IterationCount.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMAttrs.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKLOWERLINALGTOLOOPS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// The attribute scf-to-cf carries from an scf.for to its loop's branch,
/// where it is llvm.br's loop metadata.
constexpr llvm::StringLiteral kLoopAnnotation = "loop_annotation";

/// Replaces `loop` (from linalgOpToLoops: no iter_args) by an scf.parallel
/// with the same bounds and body.
void makeParallel(RewriterBase &rewriter, scf::ForOp loop) {
  rewriter.setInsertionPoint(loop);
  auto parallel = scf::ParallelOp::create(
      rewriter, loop.getLoc(), ValueRange{loop.getLowerBound()},
      ValueRange{loop.getUpperBound()}, ValueRange{loop.getStep()});
  Block *body = parallel.getBody();
  rewriter.eraseOp(loop.getBody()->getTerminator());
  rewriter.inlineBlockBefore(loop.getBody(), body->getTerminator(),
                             body->getArguments());
  rewriter.eraseOp(loop);
}

/// The loop nest `loops` (outermost first) made parallel where its
/// iteration count, known only at run time, reaches `threshold`: an scf.if
/// between a parallel copy and the serial nest.
void makeParallelFromCount(RewriterBase &rewriter, ArrayRef<Operation *> loops,
                           int64_t threshold) {
  auto outer = cast<scf::ForOp>(loops.front());
  Location loc = outer.getLoc();
  rewriter.setInsertionPoint(outer);
  // Loops from linalgOpToLoops count from 0 by 1 to bounds computed before
  // the nest.
  Value count = arith::ConstantIndexOp::create(rewriter, loc, 1);
  for (Operation *op : loops) {
    Value bound = cast<scf::ForOp>(op).getUpperBound();
    if (bound.getParentRegion()->isProperAncestor(&outer.getRegion()))
      count = arith::MulIOp::create(rewriter, loc, count, bound);
  }
  Value large = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::sge, count,
      arith::ConstantIndexOp::create(rewriter, loc, threshold));
  auto choice = scf::IfOp::create(rewriter, loc, large, /*withElse=*/true);
  rewriter.setInsertionPointToStart(choice.elseBlock());
  rewriter.clone(*outer);
  rewriter.moveOpBefore(outer, choice.thenBlock()->getTerminator());
  makeParallel(rewriter, outer);
}

struct LowerLinalgToLoopsPass
    : public mlir::pk::impl::PkLowerLinalgToLoopsBase<LowerLinalgToLoopsPass> {
  using PkLowerLinalgToLoopsBase::PkLowerLinalgToLoopsBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    MLIRContext *context = &getContext();
    auto noUnroll = LLVM::LoopAnnotationAttr::get(
        context, {}, {}, {},
        LLVM::LoopUnrollAttr::get(context, rewriter.getBoolAttr(true), {}, {},
                                  {}, {}, {}, {}),
        {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});
    auto twoVectorsPerStep = LLVM::LoopAnnotationAttr::get(
        context, {}, {},
        LLVM::LoopInterleaveAttr::get(context, rewriter.getI32IntegerAttr(2)),
        {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});
    for (linalg::LinalgOp op : ops) {
      // Inside a parallel loop (a tile of rows) the loops stay serial:
      // OpenMP would run a nested parallel region on one thread anyway.
      bool nested = op->getParentOfType<scf::ForallOp>() ||
                    op->getParentOfType<scf::ParallelOp>();
      bool mayBeParallel =
          !nested && parallelThreshold > 0 && op.getNumLoops() > 0 &&
          op.getIteratorTypesArray().front() == utils::IteratorType::parallel;
      // A dynamic size decides when the kernel runs.
      bool dynamic =
          llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic);
      bool parallel = mayBeParallel && !dynamic &&
                      mlir::pk::iterationCount(op) >= parallelThreshold;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToLoops(rewriter, op);
      if (failed(loops)) {
        op.emitOpError("could not be lowered to loops");
        return signalPassFailure();
      }
      // LLVM would fully unroll short outer loops (a tile's 4 rows), each
      // copy with its own vectorized inner loop: code (and compile time)
      // without speed.
      if (loops->size() > 1)
        for (Operation *loop : ArrayRef<Operation *>(*loops).drop_back())
          loop->setAttr(kLoopAnnotation, noUnroll);
      // An elementwise loop of unknown length takes two vectors a step, as
      // LLVM takes for a static one. LLVM's own choice (up to 4) leaves
      // rows shorter than 32-64 floats (a 64x65 stencil's) to remainder
      // loops; one vector a step has no vector epilogue (LLVM vectorizes
      // those of loops taking 16 elements a step or more), so up to 7
      // floats of every row ran scalar (64x65 laplacian 1.17x static, a
      // stencil of 10,000 1.26x; two: 1.09x and 0.9-1.0x).
      if (!loops->empty() && op.getNumReductionLoops() == 0 &&
          ShapedType::isDynamic(op.getStaticLoopRanges().back()))
        loops->back()->setAttr(kLoopAnnotation, twoVectorsPerStep);
      if (parallel && !loops->empty())
        makeParallel(rewriter, cast<scf::ForOp>(loops->front()));
      else if (mayBeParallel && dynamic && !loops->empty())
        makeParallelFromCount(rewriter, *loops, parallelThreshold);
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
