//===- PkDialect.td - picokernel dialect definition --------*- tablegen -*-===//
//
// The `pk` dialect: kernels over whole-array references, as recorded by the
// tracing frontends.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_DIALECT_PK_IR_PKDIALECT_TD
#define PICOKERNEL_DIALECT_PK_IR_PKDIALECT_TD

include "mlir/IR/OpBase.td"

def Pk_Dialect : Dialect {
  let name = "pk";
  let summary = "Straight-line kernels over whole-array references.";
  let description = [{
    The `pk` dialect is what the picokernel tracers record. A kernel
    (`pk.kernel`) takes references to whole arrays (`!pk.ref<...>`), loads
    them into tensor values, computes on those values with pure elementwise,
    broadcast and matmul operations, and stores results back into refs. It
    has no control flow and no return value: every rule of this kernel
    contract is checked by the verifiers, so later passes can rely on it.

    Broadcasting is always explicit (`pk.broadcast`): the arithmetic
    operations take operands of one type, so no pass below the frontend
    needs NumPy's shape rules.

    ```mlir
    pk.kernel @fma(%a: !pk.ref<4xf32>, %b: !pk.ref<4xf32>,
                   %c: !pk.ref<4xf32>, %o: !pk.ref<4xf32>) {
      %0 = pk.load %a : !pk.ref<4xf32> -> tensor<4xf32>
      %1 = pk.load %b : !pk.ref<4xf32> -> tensor<4xf32>
      %2 = pk.mul %0, %1 : tensor<4xf32>
      %3 = pk.load %c : !pk.ref<4xf32> -> tensor<4xf32>
      %4 = pk.add %2, %3 : tensor<4xf32>
      pk.store %4, %o : tensor<4xf32> -> !pk.ref<4xf32>
      pk.return
    }
    ```
  }];
  let cppNamespace = "::mlir::pk";
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    void registerTypes();
  }];
}

class Pk_Op<string mnemonic, list<Trait> traits = []>
    : Op<Pk_Dialect, mnemonic, traits>;

#endif // PICOKERNEL_DIALECT_PK_IR_PKDIALECT_TD
