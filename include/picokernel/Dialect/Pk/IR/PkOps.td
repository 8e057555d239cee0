//===- PkOps.td - picokernel dialect operations ------------*- tablegen -*-===//

#ifndef PICOKERNEL_DIALECT_PK_IR_PKOPS_TD
#define PICOKERNEL_DIALECT_PK_IR_PKOPS_TD

include "picokernel/Dialect/Pk/IR/PkTypes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Kernel structure
//===----------------------------------------------------------------------===//

def Pk_KernelOp : Pk_Op<"kernel", [FunctionOpInterface, IsolatedFromAbove]> {
  let summary = "a kernel over whole-array references";
  let description = [{
    A named kernel. Every argument is a `!pk.ref`; the kernel returns nothing
    and writes its results by storing into refs (by convention the last one
    is the output). The body is one block of straight-line `pk` operations
    ending in `pk.return`, with at least one `pk.store`.

    ```mlir
    pk.kernel @scale(%x: !pk.ref<8xf32>, %o: !pk.ref<8xf32>) {
      %0 = pk.load %x : !pk.ref<8xf32> -> tensor<8xf32>
      %1 = pk.constant dense<2.0> : tensor<8xf32>
      %2 = pk.mul %0, %1 : tensor<8xf32>
      pk.store %2, %o : tensor<8xf32> -> !pk.ref<8xf32>
      pk.return
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name, "::mlir::FunctionType":$type)>
  ];
  let extraClassDeclaration = [{
    //===------------------------------------------------------------------===//
    // FunctionOpInterface
    //===------------------------------------------------------------------===//
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }

    ::mlir::Block &getBodyBlock() { return getBody().front(); }

    /// The name of parameter `index`: its NameLoc (the tracers give every
    /// ref one; `loc("a")` in text), else `arg<index>`.
    std::string getParameterName(unsigned index);
    /// Whether the kernel stores to parameter `index` (an output).
    bool isStoredTo(unsigned index);
    /// Whether some parameter has a dynamic (`?`) size.
    bool hasDynamicSizes();
  }];
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Pk_ReturnOp : Pk_Op<"return", [Pure, HasParent<"KernelOp">, ReturnLike,
                                   Terminator]> {
  let summary = "end of a kernel body";
  let description = [{
    Terminates a `pk.kernel`. It carries no values: kernels return their
    results through the refs they store to.

    ```mlir
    pk.return
    ```
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Memory: the only ways to touch a ref
//===----------------------------------------------------------------------===//

def Pk_LoadOp : Pk_Op<"load", [HasParent<"KernelOp">]> {
  let summary = "reads a whole array from a ref";
  let description = [{
    `ref[...]` on the right-hand side: the value of the whole array the ref
    points to, as a tensor of the ref's shape and element type.

    ```mlir
    %0 = pk.load %a : !pk.ref<4x4xf32> -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Arg<Pk_RefType, "the ref to read", [MemRead]>:$ref);
  let results = (outs Pk_Tensor:$result);
  let assemblyFormat = [{
    $ref attr-dict `:` qualified(type($ref)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Pk_StoreOp : Pk_Op<"store", [HasParent<"KernelOp">]> {
  let summary = "writes a whole array into a ref";
  let description = [{
    `ref[...] = value`: replaces the whole array the ref points to. The value
    must have exactly the ref's shape and element type (broadcasts and casts
    are explicit operations). When a kernel stores to one ref more than once,
    the last store wins.

    ```mlir
    pk.store %v, %o : tensor<4x4xf32> -> !pk.ref<4x4xf32>
    ```
  }];
  let arguments = (ins Pk_Tensor:$value,
                       Arg<Pk_RefType, "the ref to write", [MemWrite]>:$ref);
  let assemblyFormat = [{
    $value `,` $ref attr-dict `:` type($value) `->` qualified(type($ref))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

def Pk_ConstantOp : Pk_Op<"constant", [ConstantLike, Pure,
                                       AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant array";
  let description = [{
    A constant tensor: a splat of one scalar (how the frontends record a
    Python or C++ scalar operand) or a dense array (a NumPy array captured
    by the kernel).

    ```mlir
    %0 = pk.constant dense<2.0> : tensor<4xf32>
    %1 = pk.constant dense<[1, 2, 3]> : tensor<3xi32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Pk_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Pk_BroadcastOp : Pk_Op<"broadcast", [Pure,
    AllElementTypesMatch<["operand", "result"]>]> {
  let summary = "NumPy broadcasting, made explicit";
  let description = [{
    Stretches `operand` to the result shape by NumPy's rules: shapes are
    aligned at their trailing dimensions, and each operand dimension is
    either 1 or equal to the result dimension it is aligned with; missing
    leading dimensions are added. A dynamic (`?`) result dimension takes its
    size from `sizes`, one index per `?` in order.

    ```mlir
    %0 = pk.broadcast %row : tensor<3xf32> -> tensor<2x3xf32>
    %1 = pk.broadcast %col : tensor<2x1xf32> -> tensor<2x3xf32>
    %2 = pk.broadcast %s sizes(%n) : tensor<f32> -> tensor<?x3xf32>
    ```
  }];
  let arguments = (ins Pk_Tensor:$operand, Variadic<Index>:$sizes);
  let results = (outs Pk_Tensor:$result);
  let assemblyFormat = [{
    $operand (`sizes` `(` $sizes^ `)`)? attr-dict `:` type($operand) `->`
    type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$operand), [{
      build($_builder, $_state, result, operand, ::mlir::ValueRange());
    }]>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pk_DimOp : Pk_Op<"dim", [Pure]> {
  let summary = "the size of one dimension of a ref";
  let description = [{
    The number of elements along dimension `index` of the array the ref
    points to: a constant for a static dimension, the caller's size for a
    dynamic one. Broadcasts to dynamic shapes take their sizes from it.

    ```mlir
    %n = pk.dim %x[0] : !pk.ref<?x4xf32>
    ```
  }];
  let arguments = (ins Pk_RefType:$ref, I64Attr:$index);
  let results = (outs Index:$result);
  let assemblyFormat = [{
    $ref `[` $index `]` attr-dict `:` qualified(type($ref))
  }];
  let hasVerifier = 1;
}

def Pk_SliceSizeOp : Pk_Op<"slice_size", [Pure]> {
  let summary = "the length of a forward slice of a dynamic dimension";
  let description = [{
    The number of indices `offset`, `offset + step`, `offset + 2 step`, ...
    below `size`: `max(0, ceil((size - offset) / step))`. A slice
    `x[s:-t:q]` of a dimension of `n` elements (its start counted from the
    start, its stop from the end) has `pk.slice_size %n offset (s + t) step
    q` elements for every `n`, however Python clamps its bounds; a slice of
    such a slice composes (`offset` grows by the inner step times the
    outer cut, `step` multiplies).

    ```mlir
    %n = pk.dim %x[0] : !pk.ref<?xf32>
    %m = pk.slice_size %n offset 2 step 1
    %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
    %inner = pk.extract_slice %v offsets [1] sizes [%m] strides [1]
        : tensor<?xf32> -> tensor<?xf32>
    ```
  }];
  let arguments = (ins Index:$size, I64Attr:$offset, I64Attr:$step);
  let results = (outs Index:$result);
  let assemblyFormat = [{
    $size `offset` $offset `step` $step attr-dict
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pk_CountOp : Pk_Op<"count", [Pure]> {
  let summary = "a count of elements, as a number";
  let description = [{
    The product of `sizes` and `factor` (a number of elements, such as the
    divisor of a mean) as a 0-d array of a number type: floats take the
    nearest value (as NumPy converts a count), integers the value, wrapped
    where it does not fit. A mean over a dimension whose size varies
    divides by one.

    ```mlir
    %n = pk.dim %x[1] : !pk.ref<?x?xf32>
    %c = pk.count %n factor 1 : tensor<f32>
    %m = pk.count %n, %k factor 4 : tensor<f64>
    ```
  }];
  let arguments = (ins Variadic<Index>:$sizes, I64Attr:$factor);
  let results = (outs Pk_NumericTensor:$result);
  let assemblyFormat = [{
    $sizes `factor` $factor attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Pk_ExtractSliceOp : Pk_Op<"extract_slice", [Pure,
    AttrSizedOperandSegments,
    AllElementTypesMatch<["source", "result"]>]> {
  let summary = "a slice of an array";
  let description = [{
    NumPy's basic indexing with constants: `x[1:3]`, `x[:, ::2]`, `x[::-1]`,
    `x[2]`. Dimension `d` of the slice takes `sizes[d]` elements of the
    source, starting at index `offsets[d]` and `strides[d]` apart; a
    negative stride walks backwards. Every index read must lie inside the
    source. The result may drop dimensions of size 1 (how an integer index
    removes an axis); the others keep their order.

    A dimension whose size varies (`?`) is sliced from a constant offset.
    Its size is an `index` value that counts indices inside it for every
    size, walking forwards: `pk.dim` of that dimension for all of it
    (offset 0, stride 1), or `pk.slice_size` of it with the slice's stride
    as its step and an offset at least the slice's (`x[1:-1]` of `n`
    elements is `pk.slice_size %n offset 2 step 1` elements from 1). The
    dimension a size is computed from is the one sliced: callers give them
    one size. Or its size is a constant (`x[:4]`, `x[2]`, `x[3::-1]`): the
    kernel then needs the dimension to have at least one element past the
    last index read, a minimum size its callers check (ahead-of-time entry
    points return 1 below it). A slice of a constant size may start at an
    index counted from the end (`x[-3:]`, `x[-1]`, `x[:-3:-1]`): an `index`
    value, the dimension's size less a constant, computed as that size is
    (`n - 3` of a dimension of `n` elements is
    `pk.slice_size %n offset 3 step 1`), whose slice must end before the
    end; the dimension needs at least the elements from its first index
    read to the end. From such an offset, a slice of a dynamic size walks
    backwards (`x[::-1]` of `n` elements takes `n` from `n - 1`), counting
    no more indices than lie between its offset and index 0.

    ```mlir
    %0 = pk.extract_slice %x offsets [1] sizes [2] strides [1]
        : tensor<4xf32> -> tensor<2xf32>
    %1 = pk.extract_slice %m offsets [2, 3] sizes [1, 4] strides [1, -1]
        : tensor<4x4xf32> -> tensor<4xf32>
    %2 = pk.extract_slice %v offsets [1] sizes [%n] strides [1]
        : tensor<?xf32> -> tensor<?xf32>
    %3 = pk.extract_slice %v offsets [2] sizes [1] strides [1]
        : tensor<?xf32> -> tensor<f32>
    %4 = pk.extract_slice %v offsets [%m3] sizes [3] strides [1]
        : tensor<?xf32> -> tensor<3xf32>
    %5 = pk.extract_slice %v offsets [%m1] sizes [%n] strides [-1]
        : tensor<?xf32> -> tensor<?xf32>
    ```
  }];
  let arguments = (ins Pk_Tensor:$source, Variadic<Index>:$dynamic_offsets,
                       Variadic<Index>:$dynamic_sizes,
                       DenseI64ArrayAttr:$offsets, DenseI64ArrayAttr:$sizes,
                       DenseI64ArrayAttr:$strides);
  let results = (outs Pk_Tensor:$result);
  let assemblyFormat = [{
    $source `offsets` custom<DynamicIndexList>($dynamic_offsets, $offsets)
    `sizes` custom<DynamicIndexList>($dynamic_sizes, $sizes)
    `strides` $strides attr-dict `:` type($source) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$source,
                   "::llvm::ArrayRef<int64_t>":$offsets,
                   "::llvm::ArrayRef<int64_t>":$sizes,
                   "::llvm::ArrayRef<int64_t>":$strides), [{
      build($_builder, $_state, result, source, ::mlir::ValueRange(),
            ::mlir::ValueRange(), offsets, sizes, strides);
    }]>
  ];
  let extraClassDeclaration = [{
    /// Offsets and sizes as constants or values, one per dimension.
    ::llvm::SmallVector<::mlir::OpFoldResult> getMixedOffsets();
    ::llvm::SmallVector<::mlir::OpFoldResult> getMixedSizes();
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pk_InsertSliceOp : Pk_Op<"insert_slice", [Pure,
    AttrSizedOperandSegments,
    AllTypesMatch<["dest", "result"]>,
    AllElementTypesMatch<["source", "dest"]>]> {
  let summary = "an array with a slice replaced";
  let description = [{
    `o[1:3] = v` as a value: `dest` with the elements that
    `pk.extract_slice` with the same `offsets`, `sizes` and `strides` would
    read replaced by `source`, whose shape is `sizes` with some dimensions
    of size 1 dropped. A store to a slice of a ref loads the ref, inserts,
    and stores the whole array back. Sizes of dimensions that vary, and
    offsets counted from their end, are `index` values, as in
    `pk.extract_slice`.

    ```mlir
    %0 = pk.insert_slice %v into %o offsets [0, 1] sizes [4, 2] strides [1, 2]
        : tensor<4x2xf32> -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Pk_Tensor:$source, Pk_Tensor:$dest,
                       Variadic<Index>:$dynamic_offsets,
                       Variadic<Index>:$dynamic_sizes,
                       DenseI64ArrayAttr:$offsets, DenseI64ArrayAttr:$sizes,
                       DenseI64ArrayAttr:$strides);
  let results = (outs Pk_Tensor:$result);
  let assemblyFormat = [{
    $source `into` $dest
    `offsets` custom<DynamicIndexList>($dynamic_offsets, $offsets)
    `sizes` custom<DynamicIndexList>($dynamic_sizes, $sizes)
    `strides` $strides attr-dict `:` type($source) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$source,
                   "::mlir::Value":$dest,
                   "::llvm::ArrayRef<int64_t>":$offsets,
                   "::llvm::ArrayRef<int64_t>":$sizes,
                   "::llvm::ArrayRef<int64_t>":$strides), [{
      build($_builder, $_state, result, source, dest, ::mlir::ValueRange(),
            ::mlir::ValueRange(), offsets, sizes, strides);
    }]>
  ];
  let extraClassDeclaration = [{
    ::llvm::SmallVector<::mlir::OpFoldResult> getMixedOffsets();
    ::llvm::SmallVector<::mlir::OpFoldResult> getMixedSizes();
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pk_CastOp : Pk_Op<"cast", [Pure, Elementwise]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    NumPy's `astype`, and the conversions the frontends insert to apply
    NumPy's type promotion (`int32 + float32` computes in `float64`).
    Floats convert to floats with rounding to nearest-even; integers to
    floats by rounding, and floats to integers by truncation toward zero (a
    NaN or an out-of-range value gives an unspecified integer, where NumPy
    warns). Integers widen with sign extension and narrow by wrapping.
    Booleans become 0 or 1, and a number becomes a boolean by comparing it
    with zero.

    ```mlir
    %1 = pk.cast %0 : tensor<4xi32> -> tensor<4xf64>
    ```
  }];
  let arguments = (ins Pk_Tensor:$operand);
  let results = (outs Pk_Tensor:$result);
  let assemblyFormat = [{
    $operand attr-dict `:` type($operand) `->` type($result)
  }];
  let hasFolder = 1;
  // Exact shapes: Elementwise alone takes `?` as matching any size.
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise arithmetic
//===----------------------------------------------------------------------===//

class Pk_BinaryOp<string mnemonic, Type tensorType, list<Trait> traits = []>
    : Pk_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
                                           SameOperandsAndResultType])> {
  let arguments = (ins tensorType:$lhs, tensorType:$rhs);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Pk_AddOp : Pk_BinaryOp<"add", Pk_NumericTensor, [Commutative]> {
  let summary = "elementwise addition";
  let description = [{
    `lhs + rhs`, element by element. Integers wrap around on overflow, as
    NumPy arrays do.

    ```mlir
    %2 = pk.add %0, %1 : tensor<4xf32>
    ```
  }];
}

def Pk_SubOp : Pk_BinaryOp<"sub", Pk_NumericTensor> {
  let summary = "elementwise subtraction";
  let description = [{
    `lhs - rhs`, element by element. Integers wrap around on overflow.

    ```mlir
    %2 = pk.sub %0, %1 : tensor<4xi32>
    ```
  }];
}

def Pk_MulOp : Pk_BinaryOp<"mul", Pk_NumericTensor, [Commutative]> {
  let summary = "elementwise multiplication";
  let description = [{
    `lhs * rhs`, element by element. Integers wrap around on overflow.

    ```mlir
    %2 = pk.mul %0, %1 : tensor<4x4xf64>
    ```
  }];
}

def Pk_DivOp : Pk_BinaryOp<"div", Pk_FloatTensor> {
  let summary = "elementwise true division of floats";
  let description = [{
    `lhs / rhs` for floating-point operands (IEEE division: x/0 is ±inf or
    NaN). NumPy's `/` on integers is true division producing floats: the
    frontends cast the operands first, so this op never sees integers.

    ```mlir
    %2 = pk.div %0, %1 : tensor<4xf32>
    ```
  }];
}

def Pk_RemOp : Pk_BinaryOp<"rem", Pk_NumericTensor> {
  let summary = "elementwise remainder with the divisor's sign (NumPy's `%`)";
  let description = [{
    Python's and NumPy's `lhs % rhs`: the result is zero or has the sign of
    `rhs`, and `lhs == (lhs // rhs) * rhs + lhs % rhs`. For floats a zero
    result carries the divisor's sign and `x % 0` is NaN; for integers
    `x % 0` is 0, as NumPy returns (it also warns).

    ```mlir
    %2 = pk.rem %0, %1 : tensor<4xi32>
    ```

    A float remainder by the constant zero folds to NaN (its value for
    every dividend).
  }];
}

def Pk_FloorDivOp : Pk_BinaryOp<"floordiv", Pk_NumericTensor> {
  let summary = "elementwise floor division (NumPy's `//`)";
  let description = [{
    `lhs // rhs`: the quotient rounded towards negative infinity. Floats
    follow NumPy's `floor_divide` (`x // 0` is ±inf or NaN, a zero quotient
    keeps the sign of `lhs / rhs`); for integers `x // 0` is 0 and the most
    negative value divided by -1 wraps to itself, as NumPy returns.

    ```mlir
    %2 = pk.floordiv %0, %1 : tensor<4xf64>
    ```
  }];
  let hasFolder = 0;
}

def Pk_NegOp : Pk_Op<"neg", [Pure, Elementwise, SameOperandsAndResultType]> {
  let summary = "elementwise negation";
  let description = [{
    `-operand`, element by element (for integers, wrapping: the negation of
    the most negative value is itself).

    ```mlir
    %1 = pk.neg %0 : tensor<4xf32>
    ```
  }];
  let arguments = (ins Pk_NumericTensor:$operand);
  let results = (outs Pk_NumericTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Pk_MaximumOp : Pk_BinaryOp<"maximum", Pk_Tensor> {
  let summary = "elementwise maximum (NumPy's np.maximum)";
  let description = [{
    The larger of the two elements; a NaN in either operand gives that NaN,
    and of two equal elements the second (so that `maximum(0.0, -0.0)` is
    -0.0; the first for float16), as NumPy's `maximum` does: not
    commutative for signed zeros. For booleans it is logical or.

    ```mlir
    %2 = pk.maximum %0, %1 : tensor<4xf32>
    ```
  }];
  let hasFolder = 0;
}

def Pk_MinimumOp : Pk_BinaryOp<"minimum", Pk_Tensor> {
  let summary = "elementwise minimum (NumPy's np.minimum)";
  let description = [{
    The smaller of the two elements; a NaN in either operand gives that
    NaN, and of two equal elements the second (`minimum(-0.0, 0.0)` is
    0.0; the first for float16), as NumPy's `minimum` does. For booleans it
    is logical and.

    ```mlir
    %2 = pk.minimum %0, %1 : tensor<4xi32>
    ```
  }];
  let hasFolder = 0;
}

def Pk_AbsOp : Pk_Op<"abs", [Pure, Elementwise, SameOperandsAndResultType]> {
  let summary = "elementwise absolute value (NumPy's np.abs)";
  let description = [{
    `|operand|`: clears a float's sign (also of -0.0 and NaN); integers wrap
    (the most negative value stays itself); booleans are unchanged.

    ```mlir
    %1 = pk.abs %0 : tensor<4xf32>
    ```
  }];
  let arguments = (ins Pk_Tensor:$operand);
  let results = (outs Pk_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

class Pk_UnaryFloatOp<string mnemonic, string what>
    : Pk_Op<mnemonic, [Pure, Elementwise, SameOperandsAndResultType]> {
  let summary = "elementwise " # what;
  let description = [{
    NumPy's `}] # mnemonic # [{` on floating-point tensors (the frontends
    convert integer and boolean operands to float64 first, as NumPy does).
    Results follow the target's math library: within a few ulps of NumPy's.

    ```mlir
    %1 = pk.}] # mnemonic # [{ %0 : tensor<4xf32>
    ```
  }];
  let arguments = (ins Pk_FloatTensor:$operand);
  let results = (outs Pk_FloatTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

def Pk_ExpOp : Pk_UnaryFloatOp<"exp", "exponential">;
def Pk_LogOp : Pk_UnaryFloatOp<"log", "natural logarithm">;
def Pk_Log1pOp : Pk_UnaryFloatOp<"log1p", "log(1 + x), accurate near 0">;
def Pk_Expm1Op : Pk_UnaryFloatOp<"expm1", "exp(x) - 1, accurate near 0">;
def Pk_SqrtOp : Pk_UnaryFloatOp<"sqrt", "square root">;
def Pk_RsqrtOp : Pk_UnaryFloatOp<"rsqrt", "reciprocal square root">;
def Pk_TanhOp : Pk_UnaryFloatOp<"tanh", "hyperbolic tangent">;
def Pk_ErfOp : Pk_UnaryFloatOp<"erf", "error function">;
def Pk_SinOp : Pk_UnaryFloatOp<"sin", "sine">;
def Pk_CosOp : Pk_UnaryFloatOp<"cos", "cosine">;
def Pk_FloorOp : Pk_UnaryFloatOp<"floor", "rounding toward -inf">;
def Pk_CeilOp : Pk_UnaryFloatOp<"ceil", "rounding toward +inf">;
def Pk_SigmoidOp : Pk_UnaryFloatOp<"sigmoid", "logistic function 1 / (1 + exp(-x)), without overflow for x < 0">;

def Pk_PowOp : Pk_BinaryOp<"pow", Pk_FloatTensor> {
  let summary = "elementwise power of floats (NumPy's ** on floats)";
  let description = [{
    `lhs ** rhs` for floating-point tensors, following C's `pow` (NaN for a
    negative base with a non-integer exponent).

    ```mlir
    %2 = pk.pow %0, %1 : tensor<4xf32>
    ```
  }];
  let hasFolder = 0;
}

class Pk_CompareOp<string mnemonic, string predicate, list<Trait> traits = []>
    : Pk_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
        AllTypesMatch<["lhs", "rhs"]>,
        TypesMatchWith<"result is a boolean tensor of the operands' shape",
                       "lhs", "result",
                       "::llvm::cast<::mlir::ShapedType>($_self).clone("
                       "::mlir::IntegerType::get($_self.getContext(), 1))">])> {
  let summary = "elementwise `lhs " # predicate # " rhs`, as booleans";
  let description = [{
    Compares two tensors of one type element by element, giving a boolean
    tensor. As in NumPy, every comparison with a NaN is false except `!=`,
    which is true; booleans compare as 0 and 1.

    ```mlir
    %2 = pk.}] # mnemonic # [{ %0, %1 : tensor<4xf32>
    ```
  }];
  let arguments = (ins Pk_Tensor:$lhs, Pk_Tensor:$rhs);
  let results = (outs RankedTensorOf<[I1]>:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs)";
  // A widened integer compared with a constant compares in its own type
  // (or not at all, when the constant is out of its range).
  let hasCanonicalizer = 1;
}

def Pk_LessOp : Pk_CompareOp<"lt", "<">;
def Pk_LessEqualOp : Pk_CompareOp<"le", "<=">;
def Pk_GreaterOp : Pk_CompareOp<"gt", ">">;
def Pk_GreaterEqualOp : Pk_CompareOp<"ge", ">=">;
def Pk_EqualOp : Pk_CompareOp<"eq", "==", [Commutative]>;
def Pk_NotEqualOp : Pk_CompareOp<"ne", "!=", [Commutative]>;

def Pk_SelectOp : Pk_Op<"select", [Pure, Elementwise,
    AllTypesMatch<["true_value", "false_value", "result"]>]> {
  let summary = "elementwise choice (NumPy's np.where)";
  let description = [{
    `condition ? true_value : false_value`, element by element: a
    data-dependent choice recorded in the IR instead of Python control flow.

    ```mlir
    %3 = pk.select %c, %a, %b : tensor<4xi1>, tensor<4xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I1]>:$condition,
                       Pk_Tensor:$true_value, Pk_Tensor:$false_value);
  let results = (outs Pk_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:`
    type($condition) `,` type($result)
  }];
  // Exact shapes: Elementwise alone takes `?` as matching any size.
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Pk_ReduceOp<string mnemonic, string what, Type tensorType>
    : Pk_Op<mnemonic, [Pure, AllElementTypesMatch<["operand", "result"]>]> {
  let summary = what # " over static axes";
  let description = [{
    Reduces `operand` over `axes` (distinct, in range, in any order). The
    reduced dimensions are removed from the result, or kept with size 1 when
    `keep_dims` is set (NumPy's `keepdims=True`). The element type is kept:
    the frontends convert first where NumPy accumulates in a wider type.
    Max and min propagate NaNs, as NumPy's do.

    ```mlir
    %1 = pk.}] # mnemonic # [{ %0 axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
    %2 = pk.}] # mnemonic # [{ %0 axes = [1] keep_dims : tensor<4x8xf32> -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins tensorType:$operand, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keep_dims);
  let results = (outs tensorType:$result);
  let assemblyFormat = [{
    $operand `axes` `=` $axes (`keep_dims` $keep_dims^)? attr-dict `:`
    type($operand) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether dimension `dim` of the operand is reduced.
    bool isReduced(int64_t dim) {
      return ::llvm::is_contained(getAxes(), dim);
    }
  }];
}

def Pk_ReduceSumOp : Pk_ReduceOp<"reduce_sum", "sum", Pk_NumericTensor>;
def Pk_ReduceMaxOp : Pk_ReduceOp<"reduce_max", "maximum", Pk_Tensor>;
def Pk_ReduceMinOp : Pk_ReduceOp<"reduce_min", "minimum", Pk_Tensor>;

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Pk_MatmulOp : Pk_Op<"matmul", [Pure,
    AllElementTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "matrix product with NumPy's `@` shape rules";
  let description = [{
    `lhs @ rhs`. Both operands are at least 1-D. The last dimension of `lhs`
    is contracted with the second-to-last dimension of `rhs` (its only one
    when `rhs` is 1-D). A 1-D `lhs` is a row vector and a 1-D `rhs` a column
    vector, and that dimension is absent from the result. Dimensions before
    the last two are batch dimensions: when both operands are at least 2-D
    they must be equal (NumPy's batch broadcasting is an explicit
    `pk.broadcast` before the matmul).

    ```mlir
    %0 = pk.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
    %1 = pk.matmul %a, %v : tensor<2x3xf32>, tensor<3xf32> -> tensor<2xf32>
    %2 = pk.matmul %u, %v : tensor<3xf32>, tensor<3xf32> -> tensor<f32>
    %3 = pk.matmul %x, %y : tensor<5x2x3xf64>, tensor<5x3x4xf64> -> tensor<5x2x4xf64>
    ```
  }];
  let arguments = (ins Pk_NumericTensor:$lhs, Pk_NumericTensor:$rhs);
  let results = (outs Pk_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // PICOKERNEL_DIALECT_PK_IR_PKOPS_TD
