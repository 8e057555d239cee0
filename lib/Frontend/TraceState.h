//===- TraceState.h - the state of one trace (private) ---------*- C++ -*-===//
//
// Each trace owns a TraceState: the module being built, a builder positioned
// in the kernel body, and the open flag that makes values unusable once
// their trace has ended. The operators only convert operands; NumPy's rules
// (promotion, weak scalars, broadcasting, matmul shapes) are applied by the
// TraceState's builders, so that the IR below the frontend is explicit.
// Its members are defined by concern: TraceState.cpp (parameters, loads,
// stores, ownership), Promotion.cpp (NumPy's type promotion and constants),
// Elementwise.cpp, Contractions.cpp (reductions, matmul) and Indexing.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_FRONTEND_TRACESTATE_H
#define PICOKERNEL_LIB_FRONTEND_TRACESTATE_H

#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Frontend/Trace.h"
#include "picokernel/Support/Diagnostics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
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

[[noreturn]] inline void
fail(const SourceLoc &where, const std::string &op, const std::string &message,
     TraceError::Category category = TraceError::Category::Value) {
  throw TraceError(op + ": " + message, where, category);
}

inline std::string quoted(DType dtype) { return std::string(dtypeName(dtype)); }

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

class TraceState : public std::enable_shared_from_this<TraceState> {
public:
  TraceState(mlir::MLIRContext &context, std::string kernelName,
             const Signature &signature, const SourceLoc &where);

  /// Names become symbols and locations: no NUL, and a kernel's not empty.
  static void checkName(const std::string &what, const std::string &name,
                        const SourceLoc &where, bool mayBeEmpty = false);

  const std::string &kernelName() const { return name; }
  const std::string &argName(unsigned index) const { return refNames[index]; }
  mlir::BlockArgument refValue(unsigned index);
  mlir::pk::RefType refType(unsigned index);

  //===--------------------------------------------------------------------===//
  // Ownership: values belong to one open trace
  //===--------------------------------------------------------------------===//

  static std::shared_ptr<TraceState> &stateOf(const Value &value);

  void checkOpen(const std::string &op, const SourceLoc &where) const;

  /// The trace that the traced operands of one operation belong to.
  static TraceState &owner(std::initializer_list<const Operand *> operands,
                           const std::string &op);

  //===--------------------------------------------------------------------===//
  // Building blocks
  //===--------------------------------------------------------------------===//

  mlir::Location location(const SourceLoc &where);

  Value wrap(mlir::Value value) { return Value(shared_from_this(), value); }

  mlir::RankedTensorType tensorType(const Shape &shape, DType dtype);

  static Shape shapeOf(mlir::Value value);

  static DType dtypeOf(mlir::Value value);

  static Shape shapeOf(const Operand &operand);

  /// A C++ number as an element of `dtype`, or an error if it does not fit
  /// (NumPy raises OverflowError for out-of-bounds Python integers).
  mlir::TypedAttr scalarAttr(const Operand &number, DType dtype,
                             const std::string &op);

  /// A big integer's value for messages: exact below 2^64, else the
  /// nearest double (2^70 is 1.1805916207174113e+21).
  static std::string formatBigInteger(const Operand &number);

  /// Whether an integer dtype holds `value`.
  static bool fitsIn(int64_t value, DType dtype);

  /// `operand` as a tensor of `dtype` and `shape`: casts and broadcasts a
  /// traced value, splats a number.
  mlir::Value materialize(const Operand &operand, DType dtype,
                          const Shape &shape, const std::string &op);

  /// The element type an operand has as an array: a traced value's, or a
  /// pk::typed number's. Plain C++ numbers have none (weakly typed).
  static std::optional<DType> arrayType(const Operand &operand);

  mlir::Value constantArray(const Operand::ConstantArray &array,
                            mlir::Location loc);

  /// NumPy's result type for two operands, Python scalars being weak (NEP
  /// 50): a number takes the array's type, except that an integer array and
  /// a floating-point number compute in float64 and a bool array and an
  /// integer in int64.
  static DType resultType(const Operand &lhs, const Operand &rhs);

  /// The dtype NumPy gives a lone Python number: bool, int64 or float64
  /// (DType orders them so).
  static DType weakType(const Operand &number);

  Shape broadcastOperands(const Operand &lhs, const Operand &rhs,
                          const std::string &op);

  //===--------------------------------------------------------------------===//
  // Operations
  //===--------------------------------------------------------------------===//

  Value binary(BinaryKind kind, const Operand &lhs, const Operand &rhs);

  /// `x kind huge` (or `huge kind x` unless `hugeOnRight`) for every
  /// integer x, where huge is beyond int64, positive or not.
  static bool comparedWithHuge(CompareKind kind, bool hugeOnRight,
                               bool positive);

  Value compare(CompareKind kind, const Operand &lhs, const Operand &rhs);

  Value mathFunction(MathFunction function, const Operand &operand);

  Value power(const Operand &base, const Operand &exponent, bool inPlace);

  /// Whether NumPy's power loop sees the exponent with stride 0: one
  /// element, unless NumPy takes its trivial loop (every operand 0-d or of
  /// the result's shape, and the output a new array), which steps through
  /// a one-element exponent of the result's shape with its own stride.
  static bool exponentRepeatsAcrossLoop(const Operand &base,
                                        const Operand &exponent,
                                        const Shape &result, bool inPlace);

  /// `value ** exponent` by repeated squaring: wrapping multiplications
  /// give NumPy's integer power exactly.
  mlir::Value integerPower(mlir::Value value, uint64_t exponent,
                           mlir::Location loc);

  enum class ReduceKind { Sum, Max, Min, Mean };

  /// NumPy's reductions. `axes` absent means every axis; an empty list
  /// reduces nothing (NumPy's `axis=()`: the value, converted as the
  /// reduction would convert it).
  Value reduce(ReduceKind kind, const Operand &operand, const Axes &given,
               bool keepdims);

  Value absolute(const Operand &operand);

  Value select(const Operand &condition, const Operand &a, const Operand &b);

  Value negate(const Operand &operand);

  Value matmul(const Operand &lhs, const Operand &rhs);

  Value cast(const Operand &operand, DType dtype);

  Value load(unsigned index, const SourceLoc &where);

  void store(unsigned index, const Operand &value);

  /// `ref[index] = value`: the ref's contents with the slice replaced.
  void store(unsigned ref, const Index &index, const Operand &value);

  /// `value[index]`.
  Value slice(const Operand &value, const Index &index);

  /// `value` (a traced value or a constant array) with leading dimensions
  /// of size 1 dropped, down to `shape`.
  Operand withShape(const Operand &value, const Shape &shape);

  /// `value` checked and converted for a store into `target` (a part of
  /// ref `index` with shape `targetShape`).
  mlir::Value storable(unsigned index, const Operand &value,
                       const Shape &targetShape, const std::string &target,
                       const std::string &op);

  //===--------------------------------------------------------------------===//
  // End of the trace
  //===--------------------------------------------------------------------===//

  mlir::OwningOpRef<mlir::ModuleOp> finish(const SourceLoc &where);

  void abandon();

private:
  mlir::Block &body() { return kernel.getBody().front(); }

  std::string name;
  mlir::OpBuilder builder;
  mlir::Location kernelLoc = builder.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::pk::KernelOp kernel;
  std::vector<std::string> refNames; // per parameter
  std::vector<unsigned> refArg;      // parameter -> kernel argument
  bool open = true;
  bool hasStore = false;
};

} // namespace detail
} // namespace pk

#endif // PICOKERNEL_LIB_FRONTEND_TRACESTATE_H
