//===- GuardKeyTest.cpp - keys of dynamic-sizes variants ------------------===//

#include "Kernel/GuardKey.h"

#include <gtest/gtest.h>

#include <random>

namespace {

using namespace pk::detail;

/// An exact key of `count` float32 arrays of random ranks and small sizes
/// (0, 1, 2, 3, 5 and 7), none aliased.
Key randomKey(std::mt19937 &rng, int count) {
  static const int64_t sizes[] = {0, 1, 2, 3, 5, 7};
  Key key{count};
  for (int i = 0; i < count; ++i) {
    int64_t rank = int64_t(rng() % 3);
    key.push_back(int64_t(pk::DType::F32));
    key.push_back(rank);
    for (int64_t d = 0; d < rank; ++d)
      key.push_back(sizes[rng() % 6]);
    key.push_back(-1);
  }
  return key;
}

/// A mask for `key`'s sizes: static, dynamic from 2 or from 4, or
/// related to another size by a difference of -1, 0 or 1.
SizeMask randomMask(std::mt19937 &rng, KeyView key) {
  size_t count = patternOf(key).size() - 1 - 3 * size_t(key[0]);
  SizeMask mask;
  for (size_t position = 0; position < count; ++position) {
    switch (rng() % 4) {
    case 0:
      mask.push_back(0);
      break;
    case 1:
      mask.push_back(2);
      break;
    case 2:
      mask.push_back(4);
      break;
    default:
      mask.push_back(
          maskOfRelation({size_t(rng() % count), int64_t(rng() % 3) - 1}));
    }
  }
  return mask;
}

// servesDynamicKey answers, without writing a key, whether the key of
// another call is the one encodeDynamicKey writes for this call: every
// pair of random calls of one pattern, under random masks, agrees.
TEST(GuardKey, ServesDynamicKeyAgreesWithTheKeyWritten) {
  std::mt19937 rng(11);
  int served = 0, notServed = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    Key key = randomKey(rng, 1 + int(rng() % 3));
    SizeMask mask = randomMask(rng, key);
    // Another call of the same pattern: the same ranks, new sizes.
    Key other = key;
    size_t at = 1;
    for (int64_t i = 0; i < key[0]; ++i) {
      for (int64_t d = 0; d < key[at + 1]; ++d)
        if (rng() % 2)
          other[at + 2 + size_t(d)] = key[at + 2 + size_t(d)] + 1;
      at += 3 + size_t(key[at + 1]);
    }
    llvm::SmallVector<int64_t, 32> variant, own;
    llvm::SmallVector<int64_t, 8> sizes;
    if (!encodeDynamicKey(key, mask, variant, sizes))
      continue;
    sizes.clear();
    bool expected = encodeDynamicKey(other, mask, own, sizes) &&
                    llvm::ArrayRef<int64_t>(own) == llvm::ArrayRef(variant);
    EXPECT_EQ(servesDynamicKey(other, mask, variant), expected)
        << "trial " << trial;
    // A key cut short or grown by a word serves nothing.
    EXPECT_FALSE(servesDynamicKey(other, mask,
                                  KeyView(variant.data(), variant.size() - 1)));
    variant.push_back(2);
    EXPECT_FALSE(servesDynamicKey(other, mask, variant));
    (expected ? served : notServed) += 1;
  }
  // (Both answers were drawn often.)
  EXPECT_GT(served, 200);
  EXPECT_GT(notServed, 200);
}

} // namespace
