//===- ForwardStores.cpp - loads first, stores last -----------------------===//

#include "picokernel/Dialect/Pk/Transforms/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKFORWARDSTORES
#include "picokernel/Dialect/Pk/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {
struct ForwardStoresPass
    : public mlir::pk::impl::PkForwardStoresBase<ForwardStoresPass> {
  void runOnOperation() override {
    Block &body = getOperation().getBodyBlock();
    // What a load of each ref reads at the current point: the value last
    // stored to it, or the value of its first load.
    llvm::DenseMap<Value, Value> contents;
    llvm::DenseMap<Value, StoreOp> lastStore;
    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (auto load = dyn_cast<LoadOp>(op)) {
        if (Value known = contents.lookup(load.getRef())) {
          load.replaceAllUsesWith(known);
          load.erase();
        } else {
          contents[load.getRef()] = load.getResult();
        }
      } else if (auto store = dyn_cast<StoreOp>(op)) {
        if (StoreOp overwritten = lastStore.lookup(store.getRef()))
          overwritten.erase();
        lastStore[store.getRef()] = store;
        contents[store.getRef()] = store.getValue();
      }
    }
    Operation *terminator = body.getTerminator();
    for (StoreOp store : llvm::to_vector(body.getOps<StoreOp>()))
      store->moveBefore(terminator);
  }
};
} // namespace
