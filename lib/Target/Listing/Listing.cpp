//===- Listing.cpp - the seed-style listing of a pk kernel ----------------===//

#include "picokernel/Target/Listing.h"
#include "picokernel/Target/PkToListing.h"

#include "picokernel/Support/DType.h"
#include "picokernel/Support/DTypeIR.h"
#include "picokernel/Support/ModuleIR.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/TypeSwitch.h"

#include <charconv>

using namespace mlir;
using namespace mlir::pk;

namespace {

/// Constants longer than this many elements are abbreviated.
constexpr int64_t kMaxListedElements = 8;

/// NumPy's name of an element type ("float32", "bool"), MLIR's otherwise.
std::string elementName(Type element) {
  if (std::optional<::pk::DType> dtype = ::pk::fromMlirType(element))
    return std::string(::pk::dtypeName(*dtype));
  std::string text;
  llvm::raw_string_ostream os(text);
  os << element;
  return text;
}

/// The original picokernel's tag: `<3,5:float32>` for an array (`?`: a
/// dynamic size), `<:float64>` for a 0-d one, `<index>` for a size.
/// `scalar`: the array as the scalar it broadcasts (a splat constant).
void printTypeTag(Type type, bool scalar, llvm::raw_ostream &os) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor) {
    os << "<" << type << ">";
    return;
  }
  os << "<";
  if (!scalar)
    llvm::interleave(
        tensor.getShape(), os,
        [&](int64_t size) {
          if (ShapedType::isDynamic(size))
            os << "?";
          else
            os << size;
        },
        ",");
  os << ":" << elementName(tensor.getElementType()) << ">";
}

/// A float as Python's repr (NumPy's for its width) writes it: the
/// shortest digits that read back (`0.1`, `1e-07`), `2.0` rather than `2`,
/// `inf`, `-inf`, `nan`.
std::string pythonRepr(const llvm::APFloat &value) {
  if (value.isNaN())
    return "nan";
  if (value.isInfinity())
    return value.isNegative() ? "-inf" : "inf";
  std::string text;
  if (&value.getSemantics() == &llvm::APFloat::IEEEdouble() ||
      &value.getSemantics() == &llvm::APFloat::IEEEsingle()) {
    char buffer[64];
    bool isDouble = &value.getSemantics() == &llvm::APFloat::IEEEdouble();
    std::to_chars_result end =
        isDouble ? std::to_chars(buffer, buffer + sizeof(buffer),
                                 value.convertToDouble())
                 : std::to_chars(buffer, buffer + sizeof(buffer),
                                 value.convertToFloat());
    text.assign(buffer, end.ptr);
  } else {
    // (16-bit floats: the fewest digits that read back as the same value,
    // as NumPy prints them.)
    float wide = value.convertToFloat();
    char buffer[64];
    for (int digits = 1; digits <= 9; ++digits) {
      std::to_chars_result end =
          std::to_chars(buffer, buffer + sizeof(buffer), wide,
                        std::chars_format::general, digits);
      text.assign(buffer, end.ptr);
      float read = 0;
      std::from_chars(buffer, end.ptr, read);
      llvm::APFloat narrowed(read);
      bool inexact = false;
      narrowed.convert(value.getSemantics(), llvm::APFloat::rmNearestTiesToEven,
                       &inexact);
      if (narrowed.bitwiseIsEqual(value))
        break;
    }
  }
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text;
}

void printElements(ElementsAttr value, llvm::raw_ostream &os) {
  auto printOne = [&](Attribute element) {
    if (auto f = dyn_cast<FloatAttr>(element)) {
      os << pythonRepr(f.getValue());
    } else if (auto i = dyn_cast<IntegerAttr>(element)) {
      if (i.getType().isInteger(1))
        os << (i.getValue().isZero() ? "false" : "true");
      else
        i.getValue().print(os, /*isSigned=*/!i.getType().isUnsignedInteger());
    } else {
      os << element;
    }
  };
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense) {
    os << "...";
    return;
  }
  if (dense.isSplat()) {
    printOne(dense.getSplatValue<Attribute>());
    return;
  }
  os << "[";
  int64_t count = 0;
  for (Attribute element : dense.getValues<Attribute>()) {
    if (count == kMaxListedElements) {
      os << ", ...";
      break;
    }
    if (count++)
      os << ", ";
    printOne(element);
  }
  os << "]";
}

/// A slice in Python's notation: `[1:3, ::2, 3::-1]`; a dynamic size is
/// the value's name (`[1:1+v2]`).
void printSlice(ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
                ArrayRef<int64_t> strides,
                const llvm::DenseMap<Value, std::string> &names,
                llvm::raw_ostream &os) {
  os << "[";
  for (auto [d, offset, size, stride] :
       llvm::enumerate(offsets, sizes, strides)) {
    if (d)
      os << ", ";
    std::optional<int64_t> first = getConstantIntValue(offset);
    std::string start =
        first ? std::to_string(*first) : names.lookup(cast<Value>(offset));
    std::optional<int64_t> count = getConstantIntValue(size);
    os << start << ":";
    if (count && first) {
      int64_t stop = *first + *count * stride;
      // A backwards slice that runs to the start has no stop in Python.
      if (stop >= 0)
        os << stop;
    } else if (count) {
      int64_t span = *count * stride;
      os << start << (span < 0 ? "" : "+") << span;
    } else {
      os << start << "+" << names.lookup(cast<Value>(size))
         << (stride != 1 ? "*" + std::to_string(stride) : "");
    }
    if (stride != 1)
      os << ":" << stride;
  }
  os << "]";
}

} // namespace

void mlir::pk::printListing(KernelOp kernel, llvm::raw_ostream &os) {
  Block &body = kernel.getBodyBlock();
  llvm::DenseMap<Value, std::string> names;
  for (BlockArgument arg : body.getArguments())
    names[arg] = kernel.getParameterName(arg.getArgNumber());

  os << "kernel " << kernel.getSymName() << "(";
  llvm::interleaveComma(body.getArguments(), os,
                        [&](BlockArgument arg) { os << names[arg]; });
  os << "):";

  unsigned nextValue = 0;
  auto operands = [&](Operation &op) {
    std::string text;
    llvm::raw_string_ostream ts(text);
    llvm::interleaveComma(op.getOperands(), ts,
                          [&](Value v) { ts << names.lookup(v); });
    return text;
  };
  for (Operation &op : body) {
    if (isa<ReturnOp>(op))
      continue;
    os << "\n  ";
    if (auto store = dyn_cast<StoreOp>(op)) {
      os << "STORE [" << names.lookup(store.getRef()) << "]("
         << names.lookup(store.getValue()) << ")";
      continue;
    }
    // A splat constant (a Python number, broadcast) lists as the scalar.
    auto constant = dyn_cast<ConstantOp>(op);
    auto dense =
        constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
    for (Value result : op.getResults()) {
      names[result] = "v" + std::to_string(nextValue++);
      os << names[result];
      printTypeTag(result.getType(), dense && dense.isSplat(), os);
    }
    os << " = ";
    llvm::TypeSwitch<Operation *>(&op)
        .Case([&](LoadOp load) {
          os << "LOAD [" << names.lookup(load.getRef()) << "]()";
        })
        .Case([&](ExtractSliceOp slice) {
          os << "SLICE(" << names.lookup(slice.getSource()) << ")";
          printSlice(slice.getMixedOffsets(), slice.getMixedSizes(),
                     slice.getStrides(), names, os);
        })
        .Case([&](InsertSliceOp insert) {
          os << "INSERT_SLICE(" << names.lookup(insert.getSource()) << ", "
             << names.lookup(insert.getDest()) << ")";
          printSlice(insert.getMixedOffsets(), insert.getMixedSizes(),
                     insert.getStrides(), names, os);
        })
        .Case([&](DimOp dim) {
          os << "DIM(" << operands(op) << ")[" << dim.getIndex() << "]";
        })
        .Case([&](SliceSizeOp size) {
          os << "SLICE_SIZE(" << operands(op) << ")[" << size.getOffset()
             << "::" << size.getStep() << "]";
        })
        .Case([&](CountOp count) {
          os << "COUNT(" << operands(op) << ")";
          if (count.getFactor() != 1)
            os << "*" << count.getFactor();
        })
        .Case([&](ConstantOp constant) {
          os << "CONST(";
          printElements(constant.getValue(), os);
          os << ")";
        })
        // Python's name for `/` (pk.div divides floats only).
        .Case([&](DivOp) { os << "TRUEDIV(" << operands(op) << ")"; })
        .Default([&](Operation *other) {
          os << other->getName().stripDialect().upper() << "("
             << operands(*other) << ")";
        });
  }
}

namespace pk {
std::string listing(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.walk([&](mlir::pk::KernelOp kernel) {
    if (!text.empty())
      os << "\n\n";
    mlir::pk::printListing(kernel, os);
  });
  return text;
}

std::string listing(const Module &module) {
  mlir::ModuleOp ir = irOf(module);
  return ir ? listing(ir) : std::string();
}
} // namespace pk

void mlir::pk::registerToListingTranslation() {
  TranslateFromMLIRRegistration registration(
      "pk-to-listing", "print pk kernels as seed-style listings",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        bool any = false;
        op->walk([&](KernelOp kernel) {
          if (any)
            os << "\n";
          printListing(kernel, os);
          os << "\n";
          any = true;
        });
        if (!any)
          return op->emitError("no pk.kernel to list");
        return success();
      },
      [](DialectRegistry &registry) { registry.insert<PkDialect>(); });
}
