//===- PkTypes.td - picokernel dialect types ---------------*- tablegen -*-===//

#ifndef PICOKERNEL_DIALECT_PK_IR_PKTYPES_TD
#define PICOKERNEL_DIALECT_PK_IR_PKTYPES_TD

include "picokernel/Dialect/Pk/IR/PkDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/CommonTypeConstraints.td"

// The element types a kernel can compute on: NumPy's float16, bfloat16,
// float32, float64, bool, and signed and unsigned integers (ui8...ui64:
// the lowering computes on their bits with the unsigned operations).
// C++: mlir::pk::isPkElementType(Type).
def Pk_ElementType : AnyTypeOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64,
                                 UI8, UI16, UI32, UI64],
                               "pk element type"> {
  let cppFunctionName = "isPkElementType";
}

// Element types on which +, -, *, neg and @ are defined (booleans are not).
def Pk_NumericType : AnyTypeOf<[F16, BF16, F32, F64, I8, I16, I32, I64, UI8,
                                 UI16, UI32, UI64],
                               "pk numeric element type">;

// The values that kernels compute with: ranked tensors. A dynamic (`?`)
// dimension is a size known only when the kernel runs; the dimensions of
// the operands of an elementwise operation (and of a value and the ref it
// is stored to) are the same size at run time wherever both are `?`, which
// the frontends guarantee (the guard of a kernel compiled for dynamic sizes
// checks it).
def Pk_Tensor : RankedTensorOf<[Pk_ElementType]>;
def Pk_NumericTensor : RankedTensorOf<[Pk_NumericType]>;
def Pk_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;

class Pk_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Pk_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Pk_RefType : Pk_Type<"Ref", "ref"> {
  let summary = "a reference to a whole array in memory";
  let description = [{
    A kernel parameter: the caller's array, of one element type and a shape
    whose dimensions are static sizes or `?`, a size given when the kernel
    runs (a kernel compiled once for every size). The ways to use a ref are
    to load the whole array (`pk.load`), to store a whole array into it
    (`pk.store`) and to read the size of a dimension (`pk.dim`). Rank 0 is
    a scalar held in memory.

    ```mlir
    !pk.ref<4x4xf32>
    !pk.ref<?x128xf32>
    !pk.ref<f64>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType);
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<int64_t>":$shape,
                                        "::mlir::Type":$elementType), [{
      return $_get(elementType.getContext(), shape, elementType);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The tensor type of the value that a load of this ref produces.
    ::mlir::RankedTensorType getTensorType() const;
    int64_t getRank() const { return getShape().size(); }
  }];
}

#endif // PICOKERNEL_DIALECT_PK_IR_PKTYPES_TD
