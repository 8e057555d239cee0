//===- OpBuilders.h - NumPy's rules as pk op builders (private) -*- C++ -*-===//
//
// The tracer's operations as free functions over an OpBuilder: each applies
// NumPy's rules (type promotion with weak Python scalars, broadcasting,
// reduction axes, matmul shapes, basic indexing) to its operands and builds
// explicit pk ops at the builder's insertion point, or throws a TraceError
// in the user's terms. They hold no state: the trace that owns the operands
// (TraceState) checks ownership and wraps the results.
//
// Defined by concern: Promotion.cpp (types, constants, promotion),
// Elementwise.cpp, Contractions.cpp (reductions, matmul), Indexing.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_FRONTEND_OPBUILDERS_H
#define PICOKERNEL_LIB_FRONTEND_OPBUILDERS_H

#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Frontend/TraceIR.h"
#include "picokernel/Support/DTypeIR.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace pk {
namespace detail {

enum class BinaryKind {
#define PK_BINARY(Kind, name, Op, ...) Kind,
#include "picokernel/Dialect/Pk/IR/PkElementwiseOps.def"
};

/// NumPy's name of the operation, used in error messages.
const char *binaryName(BinaryKind kind);

enum class CompareKind {
#define PK_COMPARISON(Kind, name, Op, ...) Kind,
#include "picokernel/Dialect/Pk/IR/PkElementwiseOps.def"
};

/// NumPy's name of the comparison, used in error messages.
const char *compareName(CompareKind kind);

enum class ReduceKind { Sum, Max, Min, Mean };

[[noreturn]] inline void
fail(const SourceLoc &where, const std::string &op, const std::string &message,
     TraceError::Category category = TraceError::Category::Value) {
  throw TraceError(op + ": " + message, where, category);
}

inline std::string quoted(DType dtype) { return std::string(dtypeName(dtype)); }

//===----------------------------------------------------------------------===//
// Types, constants and promotion (Promotion.cpp)
//===----------------------------------------------------------------------===//

/// The user's source line as an MLIR location (unknown when not given).
mlir::Location location(mlir::Builder &builder, const SourceLoc &where);

mlir::RankedTensorType tensorType(mlir::Builder &builder, const Shape &shape,
                                  DType dtype);

Shape shapeOf(mlir::Value value);
DType dtypeOf(mlir::Value value);
/// A traced value's or constant array's shape; a number's is ().
Shape shapeOf(const Operand &operand);

/// The element type an operand has as an array: a traced value's, or a
/// pk::typed number's. Plain C++ numbers have none (weakly typed).
std::optional<DType> arrayType(const Operand &operand);

/// NumPy's result type for two operands, Python scalars being weak (NEP
/// 50): a number takes the array's type, except that an integer array and
/// a floating-point number compute in float64 and a bool array and an
/// integer in int64.
DType resultType(const Operand &lhs, const Operand &rhs);

/// The dtype NumPy gives a lone Python number: bool, int64 or float64
/// (DType orders them so).
DType weakType(const Operand &number);

/// Whether an integer dtype holds `value`.
bool fitsIn(int64_t value, DType dtype);

/// A big integer's value for messages: exact below 2^64, else the
/// nearest double (2^70 is 1.1805916207174113e+21).
std::string formatBigInteger(const Operand &number);

/// A C++ number as an element of `dtype`, or an error if it does not fit
/// (NumPy raises OverflowError for out-of-bounds Python integers).
mlir::TypedAttr scalarAttr(mlir::Builder &builder, const Operand &number,
                           DType dtype, const std::string &op);

mlir::Value constantArray(mlir::OpBuilder &builder,
                          const Operand::ConstantArray &array,
                          mlir::Location loc);

/// `operand` as a tensor of `dtype` and `shape`: casts and broadcasts a
/// traced value or constant array, splats a number.
mlir::Value materialize(mlir::OpBuilder &builder, const Operand &operand,
                        DType dtype, const Shape &shape, const std::string &op);

/// The broadcast shape of two operands, or NumPy's error.
Shape broadcastOperands(const Operand &lhs, const Operand &rhs,
                        const std::string &op);

//===----------------------------------------------------------------------===//
// Elementwise operations (Elementwise.cpp)
//===----------------------------------------------------------------------===//

mlir::Value buildBinary(mlir::OpBuilder &builder, BinaryKind kind,
                        const Operand &lhs, const Operand &rhs);

/// `x kind huge` (or `huge kind x` unless `hugeOnRight`) for every
/// integer x, where huge is beyond int64, positive or not.
bool comparedWithHuge(CompareKind kind, bool hugeOnRight, bool positive);

mlir::Value buildCompare(mlir::OpBuilder &builder, CompareKind kind,
                         const Operand &lhs, const Operand &rhs);

mlir::Value buildMathFunction(mlir::OpBuilder &builder, MathFunction function,
                              const Operand &operand);

/// `base ** exponent`; `inPlace` for `ref **= exponent` (NumPy's loop then
/// sees the exponent differently, see exponentRepeatsAcrossLoop).
mlir::Value buildPower(mlir::OpBuilder &builder, const Operand &base,
                       const Operand &exponent, bool inPlace);

/// Whether NumPy's power loop sees the exponent with stride 0: one
/// element, unless NumPy takes its trivial loop (every operand 0-d or of
/// the result's shape, and the output a new array), which steps through
/// a one-element exponent of the result's shape with its own stride.
bool exponentRepeatsAcrossLoop(const Operand &base, const Operand &exponent,
                               const Shape &result, bool inPlace);

/// `value ** exponent` by repeated squaring: wrapping multiplications
/// give NumPy's integer power exactly.
mlir::Value integerPower(mlir::OpBuilder &builder, mlir::Value value,
                         uint64_t exponent, mlir::Location loc);

mlir::Value buildAbsolute(mlir::OpBuilder &builder, const Operand &operand);

mlir::Value buildSelect(mlir::OpBuilder &builder, const Operand &condition,
                        const Operand &a, const Operand &b);

mlir::Value buildNegate(mlir::OpBuilder &builder, const Operand &operand);

mlir::Value buildCast(mlir::OpBuilder &builder, const Operand &operand,
                      DType dtype);

//===----------------------------------------------------------------------===//
// Reductions and matmul (Contractions.cpp)
//===----------------------------------------------------------------------===//

/// NumPy's reductions. `axes` absent means every axis; an empty list
/// reduces nothing (NumPy's `axis=()`: the value, converted as the
/// reduction would convert it).
mlir::Value buildReduce(mlir::OpBuilder &builder, ReduceKind kind,
                        const Operand &operand, const Axes &given,
                        bool keepdims);

mlir::Value buildMatmul(mlir::OpBuilder &builder, const Operand &lhs,
                        const Operand &rhs);

//===----------------------------------------------------------------------===//
// Indexing (Indexing.cpp)
//===----------------------------------------------------------------------===//

/// An index resolved against a shape: what pk.extract_slice and
/// pk.insert_slice take, and the shape of the part (integer-indexed
/// dimensions dropped).
struct ResolvedIndex {
  llvm::SmallVector<int64_t> offsets, sizes, strides;
  Shape shape;
};

/// NumPy's basic indexing, with NumPy's errors (IndexError for positions
/// out of bounds and too many indices).
ResolvedIndex resolveIndex(const Shape &shape, const Index &index,
                           const std::string &op);

/// `index` as the user wrote it, one entry per dimension of an array of
/// rank `rank`, for the slice op built from it (Generalize.h): the
/// resolved offsets and sizes no longer say which bounds count from the
/// end, which a kernel for dynamic sizes needs.
void recordIndex(mlir::Operation *slice, const std::vector<IndexItem> &items,
                 size_t rank);

/// `value[index]`.
mlir::Value buildSlice(mlir::OpBuilder &builder, const Operand &value,
                       const Index &index);

/// `value` (a traced value or a constant array) with leading dimensions
/// of size 1 dropped, down to `shape`; `wrap` makes a traced value of a
/// new IR value.
Operand withShape(mlir::OpBuilder &builder, const Operand &value,
                  const Shape &shape,
                  llvm::function_ref<Value(mlir::Value)> wrap);

} // namespace detail
} // namespace pk

#endif // PICOKERNEL_LIB_FRONTEND_OPBUILDERS_H
