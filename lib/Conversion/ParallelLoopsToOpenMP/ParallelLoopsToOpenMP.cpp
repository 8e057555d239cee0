//===- ParallelLoopsToOpenMP.cpp - parallel loops as one chunk per thread -===//

#include "picokernel/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pk {
#define GEN_PASS_DEF_CONVERTPARALLELLOOPSTOOPENMP
#include "picokernel/Conversion/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// The OpenMP runtime's `name`, an `() -> i32` function, declared in
/// `module` if it is not yet.
func::FuncOp runtimeFunction(ModuleOp module, StringRef name) {
  if (auto function = module.lookupSymbol<func::FuncOp>(name))
    return function;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto type = builder.getFunctionType({}, {builder.getI32Type()});
  auto function = func::FuncOp::create(builder, module.getLoc(), name, type);
  function.setPrivate();
  return function;
}

/// A 1-D `scf.parallel` without reductions, not nested in another one:
/// an `omp.parallel` region in which each thread runs its contiguous chunk
/// of the iterations as an `scf.for` (each iteration in a
/// `memref.alloca_scope`, as upstream's conversion does). A nested one, in
/// a thread already, becomes an `scf.for`.
struct ParallelLoopToChunks : public OpRewritePattern<scf::ParallelOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(scf::ParallelOp loop,
                                PatternRewriter &rewriter) const override {
    if (loop.getNumLoops() != 1 || loop.getNumReductions() != 0)
      return rewriter.notifyMatchFailure(loop, "reduces or is not 1-D");
    Location loc = loop.getLoc();
    Value lower = loop.getLowerBound().front();
    Value upper = loop.getUpperBound().front();
    Value step = loop.getStep().front();
    bool nested = loop->getParentOfType<omp::ParallelOp>() ||
                  loop->getParentOfType<scf::ParallelOp>();
    // The body as an scf.for from `from` to `to`, at the insertion point.
    auto serially = [&](Value from, Value to) {
      auto forOp = scf::ForOp::create(rewriter, loc, from, to, step);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(forOp.getBody());
      auto scope = memref::AllocaScopeOp::create(rewriter, loc, TypeRange{});
      Block *body = rewriter.createBlock(&scope.getBodyRegion());
      rewriter.mergeBlocks(loop.getBody(), body, {forOp.getInductionVar()});
      // The body ends with its scf.reduce (of nothing).
      Operation *reduce = body->getTerminator();
      rewriter.setInsertionPoint(reduce);
      memref::AllocaScopeReturnOp::create(rewriter, loc, ValueRange{});
      rewriter.eraseOp(reduce);
    };
    if (nested) {
      serially(lower, upper);
      rewriter.eraseOp(loop);
      return success();
    }

    auto module = loop->getParentOfType<ModuleOp>();
    func::FuncOp threadNumber = runtimeFunction(module, "omp_get_thread_num");
    func::FuncOp threadCount = runtimeFunction(module, "omp_get_num_threads");
    // Iterations: ceil((upper - lower) / step), none when upper <= lower.
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value span = arith::SubIOp::create(rewriter, loc, upper, lower);
    Value count = arith::MaxSIOp::create(
        rewriter, loc, arith::CeilDivSIOp::create(rewriter, loc, span, step),
        zero);
    auto parallel = omp::ParallelOp::create(rewriter, loc);
    Block *region = rewriter.createBlock(&parallel.getRegion());
    rewriter.setInsertionPointToStart(region);
    auto indexOf = [&](func::FuncOp function) -> Value {
      Value i32 = func::CallOp::create(rewriter, loc, function).getResult(0);
      return arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(),
                                        i32);
    };
    Value thread = indexOf(threadNumber);
    Value threads = indexOf(threadCount);
    // Thread t runs iterations [t c, (t + 1) c) of count, c = ceil(count /
    // threads): upstream's static schedule, without __kmpc_for_static_init
    // (a debug build of libomp formats trace strings in every call of it)
    // or the work-sharing loop's barrier before the region's own.
    Value chunk = arith::CeilDivSIOp::create(rewriter, loc, count, threads);
    Value first = arith::MinSIOp::create(
        rewriter, loc, arith::MulIOp::create(rewriter, loc, thread, chunk),
        count);
    Value last = arith::MinSIOp::create(
        rewriter, loc, arith::AddIOp::create(rewriter, loc, first, chunk),
        count);
    auto toIndex = [&](Value iteration) -> Value {
      return arith::AddIOp::create(
          rewriter, loc, lower,
          arith::MulIOp::create(rewriter, loc, iteration, step));
    };
    serially(toIndex(first), toIndex(last));
    omp::TerminatorOp::create(rewriter, loc);
    rewriter.eraseOp(loop);
    return success();
  }
};

struct ConvertParallelLoopsToOpenMPPass
    : public mlir::pk::impl::ConvertParallelLoopsToOpenMPBase<
          ConvertParallelLoopsToOpenMPPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ParallelLoopToChunks>(&getContext());
    // Outermost loops first (pre-order), so that nested ones see them.
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
