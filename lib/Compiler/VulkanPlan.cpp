//===- VulkanPlan.cpp - sizes a plan computes at dispatch -----------------===//

#include "picokernel/Compiler/SpirvCompiler.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/MathExtras.h"

using mlir::pk::VulkanPlan;

bool VulkanPlan::evaluateSizes(const int64_t *const *shapes,
                               std::vector<int64_t> &values) const {
  values.resize(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    const SizeInstruction &step = sizes[i];
    int64_t a = step.kind == SizeInstruction::Constant ||
                        step.kind == SizeInstruction::Dim
                    ? 0
                    : values[step.operands[0]];
    int64_t b = values[step.operands[1]];
    int64_t &result = values[i];
    bool overflow = false;
    switch (step.kind) {
    case SizeInstruction::Constant:
      result = step.value;
      break;
    case SizeInstruction::Dim:
      result = shapes[step.value][step.dim];
      break;
    case SizeInstruction::Add:
      overflow = llvm::AddOverflow(a, b, result);
      break;
    case SizeInstruction::Sub:
      overflow = llvm::SubOverflow(a, b, result);
      break;
    case SizeInstruction::Mul:
      overflow = llvm::MulOverflow(a, b, result);
      break;
    case SizeInstruction::DivS:
    case SizeInstruction::CeilDivS:
    case SizeInstruction::FloorDivS:
    case SizeInstruction::RemS: {
      if (b == 0 || (a == INT64_MIN && b == -1))
        return false;
      int64_t quotient = a / b, remainder = a % b;
      bool inexact = remainder != 0;
      bool negative = (a < 0) != (b < 0);
      if (step.kind == SizeInstruction::CeilDivS && inexact && !negative)
        ++quotient;
      if (step.kind == SizeInstruction::FloorDivS && inexact && negative)
        --quotient;
      result = step.kind == SizeInstruction::RemS ? remainder : quotient;
      break;
    }
    case SizeInstruction::MinS:
      result = std::min(a, b);
      break;
    case SizeInstruction::MaxS:
      result = std::max(a, b);
      break;
    case SizeInstruction::And:
      result = a & b;
      break;
    case SizeInstruction::Or:
      result = a | b;
      break;
    case SizeInstruction::Xor:
      result = a ^ b;
      break;
    case SizeInstruction::Cmp: {
      using mlir::arith::CmpIPredicate;
      auto ua = uint64_t(a), ub = uint64_t(b);
      switch (CmpIPredicate(step.value)) {
      case CmpIPredicate::eq:
        result = a == b;
        break;
      case CmpIPredicate::ne:
        result = a != b;
        break;
      case CmpIPredicate::slt:
        result = a < b;
        break;
      case CmpIPredicate::sle:
        result = a <= b;
        break;
      case CmpIPredicate::sgt:
        result = a > b;
        break;
      case CmpIPredicate::sge:
        result = a >= b;
        break;
      case CmpIPredicate::ult:
        result = ua < ub;
        break;
      case CmpIPredicate::ule:
        result = ua <= ub;
        break;
      case CmpIPredicate::ugt:
        result = ua > ub;
        break;
      case CmpIPredicate::uge:
        result = ua >= ub;
        break;
      }
      break;
    }
    case SizeInstruction::Select:
      result = a != 0 ? b : values[step.operands[2]];
      break;
    }
    if (overflow)
      return false;
  }
  return true;
}
