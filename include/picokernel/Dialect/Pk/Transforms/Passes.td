//===- Passes.td - pk dialect transformations --------------*- tablegen -*-===//

#ifndef PICOKERNEL_DIALECT_PK_TRANSFORMS_PASSES_TD
#define PICOKERNEL_DIALECT_PK_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PkForwardStores : Pass<"pk-forward-stores", "::mlir::pk::KernelOp"> {
  let summary = "Turn a kernel's memory traffic into loads first, stores last";
  let description = [{
    Within a kernel, distinct refs are distinct arrays (the runtime passes an
    array given for two parameters as one ref), so memory traffic can be
    made explicit in values:

    - a load of a ref that was stored to earlier reads the stored value;
    - a store overwritten by a later store to the same ref is dropped (the
      last store wins);
    - repeated loads of a ref before any store to it are one load;
    - stores move to the end of the kernel, in their order.

    Afterwards each ref is loaded at most once, before any store, and stored
    at most once, at the end: the shape that lowering to destination-passing
    tensors (and bufferizing in place) relies on.

    ```mlir
    // before                                   // after
    pk.store %x, %o                             %1 = pk.add %x, %x
    %0 = pk.load %o                             pk.store %1, %o
    %1 = pk.add %0, %0
    pk.store %1, %o
    ```
  }];
}

def PkPrintAccesses : Pass<"pk-print-accesses", "::mlir::pk::KernelOp"> {
  let summary = "Report what each stored array reads, as remarks";
  let description = [{
    The analysis picokernel.dask plans its graphs with
    (`Dialect/Pk/Analysis/Accesses.h`), printed as a remark on each store of
    a kernel through pk-forward-stores: the index of each read as a function
    of the stored array's indices `o0, o1, ...` and of reduction indices
    `r0, r1, ...`, and how blocks' partial results combine when the stored
    value ends with a reduction. `?` is an index the analysis cannot follow
    (`?o1`: one that depends on `o1` in a way it cannot say).

    ```mlir
    // o[1:-1] = x[2:] - 2 * x[1:-1] + x[:-2]; o's ends read o itself:
    // remark: stores arg1: reads arg1[o0], arg0[o0 + 1], arg0[o0], arg0[o0 - 1]
    ```
  }];
}

#endif // PICOKERNEL_DIALECT_PK_TRANSFORMS_PASSES_TD
