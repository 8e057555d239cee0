//===- ShapeTest.cpp - shapes, strides and broadcasting -------------------===//

#include "picokernel/Support/Shape.h"

#include <gtest/gtest.h>

using pk::Shape;

TEST(Shape, FormatsLikeNumPy) {
  EXPECT_EQ(pk::formatShape(pk::Shape{}), "()");
  EXPECT_EQ(pk::formatShape(pk::Shape{4}), "(4,)");
  EXPECT_EQ(pk::formatShape(pk::Shape{2, 3}), "(2, 3)");
  EXPECT_EQ(pk::formatShape(Shape{0, 5, 1}), "(0, 5, 1)");
}

TEST(Shape, RowMajorStrides) {
  EXPECT_EQ(pk::rowMajorStrides(Shape{}), Shape{});
  EXPECT_EQ(pk::rowMajorStrides(Shape{7}), Shape{1});
  EXPECT_EQ(pk::rowMajorStrides(Shape{2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(pk::rowMajorStrides(Shape{3, 0, 2}), (Shape{0, 2, 1}));
}

TEST(Shape, BroadcastsLikeNumPy) {
  EXPECT_EQ(pk::broadcastShapes(Shape{3, 1}, Shape{4}), (Shape{3, 4}));
  EXPECT_EQ(pk::broadcastShapes(Shape{}, Shape{2, 2}), (Shape{2, 2}));
  EXPECT_EQ(pk::broadcastShapes(Shape{0}, Shape{1}), Shape{0});
  EXPECT_FALSE(pk::broadcastShapes(Shape{3}, Shape{4}).has_value());
  EXPECT_TRUE(pk::broadcastsTo(Shape{1, 4}, Shape{3, 4}));
  EXPECT_FALSE(pk::broadcastsTo(Shape{3, 4}, Shape{1, 4}));
}
