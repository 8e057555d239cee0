//===- CheckLoopBudget.cpp - loop iterations a device allows -------------===//
//
// Some Vulkan drivers stop a shader invocation after a fixed number of loop
// iterations and return what it computed so far (llvmpipe: 65535). A kernel
// that needs more gets a clear compile error instead of a wrong answer.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <limits>

namespace mlir::pk {
#define GEN_PASS_DEF_PKCHECKLOOPBUDGET
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

constexpr uint64_t kUnbounded = std::numeric_limits<uint64_t>::max();

uint64_t saturatingAdd(uint64_t a, uint64_t b) {
  return a > kUnbounded - b ? kUnbounded : a + b;
}

uint64_t saturatingMul(uint64_t a, uint64_t b) {
  return b != 0 && a > kUnbounded / b ? kUnbounded : a * b;
}

/// The constant trip count of `loop`, or the bound its builder recorded
/// (kMaxTripCountAttrName), or nullopt.
std::optional<uint64_t> tripCount(scf::ForOp loop) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lower || !upper || !step || *step <= 0) {
    if (auto most =
            loop->getAttrOfType<IntegerAttr>(mlir::pk::kMaxTripCountAttrName);
        most && most.getInt() >= 0)
      return most.getInt();
    return std::nullopt;
  }
  if (*upper <= *lower)
    return 0;
  return (static_cast<uint64_t>(*upper) - static_cast<uint64_t>(*lower) +
          static_cast<uint64_t>(*step) - 1) /
         static_cast<uint64_t>(*step);
}

/// The most loop steps one execution of `region` runs: the loops of each
/// block added, a loop counting its trip count times one plus its body's,
/// plus one for its exit test, an scf.if its larger branch. `unknown` is set
/// when a loop's trip count is not a constant (it is counted as one
/// iteration). (llvmpipe counts an inner loop's exit against its budget: a
/// sum over 255 x 256 ones, 255 * (256 + 1) iterations, came out short.)
uint64_t iterations(Region &region, Operation *&unknown);

uint64_t iterations(Operation &op, Operation *&unknown) {
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    std::optional<uint64_t> trips = tripCount(loop);
    if (!trips && !unknown)
      unknown = loop;
    return saturatingAdd(
        saturatingMul(trips.value_or(1),
                      saturatingAdd(1, iterations(loop.getRegion(), unknown))),
        1);
  }
  if (isa<scf::WhileOp>(op)) {
    if (!unknown)
      unknown = &op;
    uint64_t body = 0;
    for (Region &region : op.getRegions())
      body = saturatingAdd(body, iterations(region, unknown));
    return saturatingAdd(1, body);
  }
  if (isa<scf::IfOp>(op)) {
    uint64_t most = 0;
    for (Region &region : op.getRegions())
      most = std::max(most, iterations(region, unknown));
    return most;
  }
  uint64_t sum = 0;
  for (Region &region : op.getRegions())
    sum = saturatingAdd(sum, iterations(region, unknown));
  return sum;
}

uint64_t iterations(Region &region, Operation *&unknown) {
  uint64_t sum = 0;
  for (Block &block : region)
    for (Operation &op : block)
      if (op.getNumRegions() != 0)
        sum = saturatingAdd(sum, iterations(op, unknown));
  return sum;
}

struct CheckLoopBudgetPass
    : public mlir::pk::impl::PkCheckLoopBudgetBase<CheckLoopBudgetPass> {
  using PkCheckLoopBudgetBase::PkCheckLoopBudgetBase;

  void runOnOperation() override {
    if (maxIterations < 0) {
      getOperation()->emitError("max-iterations must not be negative");
      return signalPassFailure();
    }
    if (maxIterations == 0)
      return;
    uint64_t limit = static_cast<uint64_t>(maxIterations);
    bool failed = false;
    getOperation()->walk<WalkOrder::PreOrder>(
        [&](FunctionOpInterface function) {
          Operation *unknown = nullptr;
          // The thread's last loop exit ends it: not counted (a single loop
          // of exactly the limit runs whole).
          uint64_t count = iterations(function->getRegion(0), unknown);
          if (count != 0 && count != kUnbounded)
            --count;
          if (unknown) {
            // Every loop in a kernel has static bounds (shapes are static):
            // one that has not cannot be checked.
            unknown->emitError("a loop without a constant trip count cannot be "
                               "checked against the device's limit of ")
                << limit << " loop iterations per thread";
            failed = true;
          } else if (count > limit) {
            InFlightDiagnostic diagnostic = function.emitError("runs ");
            if (count == kUnbounded)
              diagnostic << "more than 2^64";
            else
              diagnostic << count;
            diagnostic << " loop iterations in one GPU thread; this device "
                          "stops a thread after "
                       << limit
                       << " and would return a partial result: run this "
                          "kernel on the CPU backend, or on another Vulkan "
                          "device";
            failed = true;
          }
          return WalkResult::skip();
        });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
