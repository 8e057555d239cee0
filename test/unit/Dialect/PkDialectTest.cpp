//===- PkDialectTest.cpp - the pk dialect through its C++ API -------------===//
//
// What the textual tests cannot reach: types and ops built by C++ code (the
// tracers), including values the parser never produces.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Dialect/Pk/IR/PkOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::pk;

namespace {

class PkDialectTest : public ::testing::Test {
protected:
  PkDialectTest()
      : handler(&context, [this](Diagnostic &diag) {
          messages.push_back(diag.str());
          return success();
        }) {
    context.loadDialect<PkDialect>();
  }

  RefType checkedRef(ArrayRef<int64_t> shape, Type elementType) {
    return RefType::getChecked(
        [&] { return emitError(UnknownLoc::get(&context)); }, &context, shape,
        elementType);
  }

  MLIRContext context;
  std::vector<std::string> messages;
  ScopedDiagnosticHandler handler;
};

TEST_F(PkDialectTest, RefTypeAcceptsStaticShapesOfKernelElementTypes) {
  Builder b(&context);
  for (Type element :
       {Type(b.getF16Type()), Type(b.getBF16Type()), Type(b.getF32Type()),
        Type(b.getF64Type()), Type(b.getI1Type()), Type(b.getI8Type()),
        Type(b.getI16Type()), Type(b.getI32Type()), Type(b.getI64Type())}) {
    RefType ref = checkedRef({2, 0, 3}, element);
    ASSERT_TRUE(ref);
    EXPECT_EQ(ref.getTensorType(), RankedTensorType::get({2, 0, 3}, element));
    EXPECT_EQ(ref.getRank(), 3);
  }
  EXPECT_TRUE(checkedRef({}, b.getF32Type())) << "rank 0 is a scalar ref";
  EXPECT_TRUE(messages.empty());
}

TEST_F(PkDialectTest, RefTypeRejectsNegativeDimensions) {
  EXPECT_FALSE(checkedRef({4, -3}, Builder(&context).getF32Type()));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "ref dimension 1 is negative (-3)");
}

TEST_F(PkDialectTest, RefTypeTakesDynamicDimensions) {
  Builder b(&context);
  RefType ref = checkedRef({ShapedType::kDynamic, 4}, b.getF32Type());
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref.getTensorType(),
            RankedTensorType::get({ShapedType::kDynamic, 4}, b.getF32Type()));
  // A dynamic size is never in the byte-size overflow check.
  EXPECT_TRUE(
      checkedRef({ShapedType::kDynamic, int64_t(1) << 60}, b.getF32Type()));
  EXPECT_TRUE(messages.empty());
}

TEST_F(PkDialectTest, RefTypeRejectsOtherElementTypes) {
  Builder b(&context);
  for (Type element :
       {Type(b.getIndexType()), Type(b.getIntegerType(32, /*isSigned=*/true)),
        Type(b.getIntegerType(3)), Type(b.getF80Type()),
        Type(b.getIntegerType(128, /*isSigned=*/false)),
        Type(RankedTensorType::get({2}, b.getF32Type()))})
    EXPECT_FALSE(checkedRef({4}, element));
  EXPECT_EQ(messages.size(), 6u);
  // NumPy's unsigned integers are refs' element types.
  EXPECT_TRUE(checkedRef({4}, b.getIntegerType(32, /*isSigned=*/false)));
}

TEST_F(PkDialectTest, RefTypeRejectsSizesThatOverflow) {
  Builder b(&context);
  EXPECT_FALSE(checkedRef({int64_t(1) << 61, 4}, b.getI8Type()));
  EXPECT_FALSE(checkedRef({int64_t(1) << 62, int64_t(1) << 62}, b.getI1Type()));
  EXPECT_EQ(messages.size(), 2u);
  // A zero-size array is never too large.
  EXPECT_TRUE(
      checkedRef({int64_t(1) << 62, int64_t(1) << 62, 0}, b.getF64Type()));
  EXPECT_TRUE(checkedRef({int64_t(1) << 30, 8}, b.getF64Type()));
}

// A kernel built the way the tracers build it verifies; breaking one rule of
// the kernel contract makes verification fail with that rule's message.
TEST_F(PkDialectTest, BuiltKernelVerifies) {
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  auto ref = RefType::get({4}, b.getF32Type());
  auto kernel =
      KernelOp::create(b, loc, "double_it", b.getFunctionType({ref, ref}, {}));
  Block *body = b.createBlock(&kernel.getBody(), {}, {ref, ref}, {loc, loc});
  Value x = LoadOp::create(b, loc, ref.getTensorType(), body->getArgument(0));
  Value sum = AddOp::create(b, loc, x, x);
  auto store = StoreOp::create(b, loc, sum, body->getArgument(1));
  ReturnOp::create(b, loc);
  EXPECT_TRUE(succeeded(verify(*module)));
  EXPECT_TRUE(messages.empty());

  store.erase();
  EXPECT_TRUE(failed(verify(*module)));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "'pk.kernel' op must store to at least one ref (a "
                         "kernel without a store computes nothing)");
}

} // namespace
