//===- FuseElementwiseTrees.cpp - one generic per elementwise tree --------===//
//
// Upstream's linalg-fuse-elementwise-ops fuses one producer into its
// consumer at a time, each time cloning the whole body fused so far: a chain
// of n elementwise ops costs O(n^2) (8,000 ops took a minute). This pass
// builds the same fused op in one step per tree of single-use producers,
// cloning each body once.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include <numeric>

namespace mlir::pk {
#define GEN_PASS_DEF_PKFUSEELEMENTWISETREES
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// A generic that can be computed inside its one user: all loops parallel,
/// one result reached through a permutation, a body that neither reads its
/// output nor asks for loop indices (those would need remapping).
bool isFusableProducer(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      !op->hasOneUse() || op.getNumLoops() != op.getNumParallelLoops() ||
      !op.hasPureTensorSemantics())
    return false;
  OpOperand *init = op.getDpsInitOperand(0);
  if (!op.getMatchingIndexingMap(init).isPermutation() ||
      !op.getMatchingBlockArgument(init).use_empty())
    return false;
  return !op.getBody()
              ->walk([](Operation *nested) {
                return isa<linalg::IndexOp>(nested) ||
                               nested->getNumRegions() != 0
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              })
              .wasInterrupted();
}

/// A member of the tree fused into `root`: a generic and the map from the
/// root's loops to its own.
struct Member {
  linalg::GenericOp op;
  AffineMap fromRoot;
};

class TreeFuser {
public:
  TreeFuser(linalg::GenericOp root, unsigned maxBodyOps, RewriterBase &rewriter)
      : root(root), maxBodyOps(maxBodyOps), rewriter(rewriter) {}

  /// Replaces `root` and the producers it absorbs (erased, and listed in
  /// `absorbed`) by one generic; false if it has no fusable producer.
  bool run(SmallVectorImpl<Operation *> &absorbed) {
    collect();
    if (members.size() == 1)
      return false;
    gatherOperands();
    // linalg derives the loop bounds from the operands' shapes: every loop
    // must still be read directly by some map (a reduction whose inputs
    // were all fused away may only see a loop through `-d1 + 3`).
    if (!inversePermutation(concatAffineMaps(maps, root.getContext())))
      return false;
    for (const Member &member : llvm::drop_begin(members))
      absorbed.push_back(member.op);
    build();
    return true;
  }

private:
  /// The tree, root first, then producers breadth first.
  void collect() {
    members.push_back({root, AffineMap::getMultiDimIdentityMap(
                                 root.getNumLoops(), root.getContext())});
    size_t bodyOps = root.getBody()->getOperations().size() - 1;
    for (size_t next = 0; next < members.size(); ++next) {
      Member member = members[next];
      for (OpOperand *input : member.op.getDpsInputOperands()) {
        auto producer = input->get().getDefiningOp<linalg::GenericOp>();
        if (!producer || producer->getBlock() != root->getBlock() ||
            !isFusableProducer(producer))
          continue;
        // Nearest producers first, until the body is as large as allowed.
        size_t producerOps = producer.getBody()->getOperations().size() - 1;
        if (bodyOps + producerOps > maxBodyOps)
          continue;
        bodyOps += producerOps;
        // The producer's loops, from the root's: through the consumer's
        // view of the tensor and the inverse of the producer's output map.
        AffineMap output =
            producer.getMatchingIndexingMap(producer.getDpsInitOperand(0));
        AffineMap fromRoot =
            inversePermutation(output)
                .compose(member.op.getMatchingIndexingMap(input))
                .compose(member.fromRoot);
        fusedInput[input] = members.size();
        members.push_back({producer, fromRoot});
      }
    }
  }

  /// The fused generic's operands: the tree's remaining inputs, each value
  /// and map once, in the order of a depth-first walk from the root (a
  /// producer's inputs take the place of the operand it fed, as upstream's
  /// fusion orders them), then the root's outputs.
  void gatherOperands() {
    SmallVector<std::pair<size_t, unsigned>> stack = {{0, 0}};
    while (!stack.empty()) {
      auto &[index, next] = stack.back();
      Member &member = members[index];
      if (next == member.op.getNumDpsInputs()) {
        stack.pop_back();
        continue;
      }
      OpOperand *input = member.op.getDpsInputOperand(next++);
      if (auto fused = fusedInput.find(input); fused != fusedInput.end()) {
        stack.push_back({fused->second, 0});
        continue;
      }
      AffineMap map =
          member.op.getMatchingIndexingMap(input).compose(member.fromRoot);
      if (inputIndex.try_emplace({input->get(), map}, inputs.size()).second) {
        inputs.push_back(input->get());
        maps.push_back(map);
      }
    }
    for (OpOperand &init : root.getDpsInitsMutable())
      maps.push_back(root.getMatchingIndexingMap(&init));
  }

  /// The fused generic, in the root's iteration space, with the bodies
  /// inlined.
  void build() {
    rewriter.setInsertionPoint(root);
    auto fused = linalg::GenericOp::create(
        rewriter, root.getLoc(), root->getResultTypes(), inputs,
        root.getDpsInits(), maps, root.getIteratorTypesArray());
    fused->setDiscardableAttrs(root->getDiscardableAttrDictionary());
    SmallVector<Type> argTypes;
    SmallVector<Location> argLocs;
    for (Value value : inputs) {
      argTypes.push_back(getElementTypeOrSelf(value.getType()));
      argLocs.push_back(value.getLoc());
    }
    for (Value value : root.getDpsInits()) {
      argTypes.push_back(getElementTypeOrSelf(value.getType()));
      argLocs.push_back(value.getLoc());
    }
    Block *body =
        rewriter.createBlock(&fused.getRegion(), {}, argTypes, argLocs);

    // The bodies in program order (producers precede their consumers, the
    // root comes last): each member's yielded value, once computed.
    SmallVector<size_t> order(members.size());
    std::iota(order.begin(), order.end(), 0);
    llvm::sort(order, [&](size_t a, size_t b) {
      return members[a].op->isBeforeInBlock(members[b].op);
    });
    SmallVector<Value> yielded(members.size());
    for (size_t index : order) {
      linalg::GenericOp op = members[index].op;
      IRMapping mapping;
      for (OpOperand *input : op.getDpsInputOperands()) {
        BlockArgument arg = op.getMatchingBlockArgument(input);
        auto fusedIt = fusedInput.find(input);
        if (fusedIt != fusedInput.end()) {
          mapping.map(arg, yielded[fusedIt->second]);
          continue;
        }
        AffineMap map =
            op.getMatchingIndexingMap(input).compose(members[index].fromRoot);
        mapping.map(arg, body->getArgument(inputIndex.at({input->get(), map})));
      }
      if (index == 0)
        for (auto [i, init] : llvm::enumerate(root.getDpsInitsMutable()))
          mapping.map(root.getMatchingBlockArgument(&init),
                      body->getArgument(inputs.size() + i));
      for (Operation &nested : op.getBody()->without_terminator())
        rewriter.clone(nested, mapping);
      auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
      if (index != 0) {
        yielded[index] = mapping.lookupOrDefault(yield.getOperand(0));
        continue;
      }
      SmallVector<Value> results;
      for (Value value : yield.getOperands())
        results.push_back(mapping.lookupOrDefault(value));
      linalg::YieldOp::create(rewriter, yield.getLoc(), results);
    }
    rewriter.replaceOp(root, fused->getResults());
    // The producers had one use each, now gone: consumers first.
    for (size_t index = 1; index < members.size(); ++index)
      rewriter.eraseOp(members[index].op);
  }

  linalg::GenericOp root;
  unsigned maxBodyOps;
  RewriterBase &rewriter;
  SmallVector<Member> members;
  /// The member computing each fused input operand.
  DenseMap<OpOperand *, size_t> fusedInput;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  DenseMap<std::pair<Value, AffineMap>, unsigned> inputIndex;
};

struct FuseElementwiseTreesPass
    : public mlir::pk::impl::PkFuseElementwiseTreesBase<
          FuseElementwiseTreesPass> {
  using PkFuseElementwiseTreesBase::PkFuseElementwiseTreesBase;

  void runOnOperation() override {
    // Roots from the last op back: a producer is absorbed by the tree of
    // its consumer before it could be a root itself.
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp op) { generics.push_back(op); });
    DenseSet<Operation *> erased;
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : llvm::reverse(generics)) {
      if (erased.contains(op))
        continue;
      SmallVector<Operation *> absorbed;
      if (TreeFuser(op, maxBodyOps, rewriter).run(absorbed))
        erased.insert(absorbed.begin(), absorbed.end());
    }
  }
};

} // namespace
