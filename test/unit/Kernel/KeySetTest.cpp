//===- KeySetTest.cpp - the keys a thread's last variant served lately ----===//

#include "Kernel/KeySet.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace {

using namespace pk::detail;

/// The key of `count` float32 vectors of length n (aliasing none).
Key vectorsKey(int64_t count, int64_t n) {
  Key key{count};
  for (int64_t i = 0; i < count; ++i)
    key.insert(key.end(), {int64_t(pk::DType::F32), 1, n, -1});
  return key;
}

TEST(KeySetTest, HoldsWhatWasInsertedAndNothingElse) {
  KeySet set;
  EXPECT_FALSE(set.contains(vectorsKey(4, 1000)));
  for (int64_t n = 1000; n < 1100; ++n)
    set.insert(vectorsKey(4, n));
  for (int64_t n = 1000; n < 1100; ++n)
    EXPECT_TRUE(set.contains(vectorsKey(4, n))) << n;
  EXPECT_FALSE(set.contains(vectorsKey(4, 999)));
  EXPECT_FALSE(set.contains(vectorsKey(4, 1100)));
  EXPECT_FALSE(set.contains(vectorsKey(3, 1000)));
  // A key one word shorter or longer, or differing in any one word.
  Key key = vectorsKey(4, 1050);
  EXPECT_FALSE(set.contains(KeyView(key).first(key.size() - 1)));
  Key longer = key;
  longer.push_back(-1);
  EXPECT_FALSE(set.contains(longer));
  for (size_t word = 0; word < key.size(); ++word) {
    Key changed = key;
    changed[word] ^= int64_t(1) << 40;
    EXPECT_FALSE(set.contains(changed)) << word;
  }
  EXPECT_FALSE(set.contains(KeyView()));
  set.insert(KeyView()); // not kept
  EXPECT_FALSE(set.contains(KeyView()));
  set.clear();
  EXPECT_FALSE(set.contains(key));
}

TEST(KeySetTest, AgreesWithASetOverRandomKeys) {
  // Sizes from a small range, so that keys collide in hash slots and
  // differ in one word only; the set clears itself when it fills.
  std::mt19937 rng(7);
  KeySet set;
  std::set<Key> reference;
  for (int step = 0; step < 20000; ++step) {
    Key key = vectorsKey(1 + rng() % 3, rng() % 300);
    if (rng() % 2) {
      bool wasFull = reference.size() == 192 && !reference.count(key);
      set.insert(key);
      if (wasFull)
        reference.clear();
      reference.insert(key);
    }
    ASSERT_EQ(set.contains(key), reference.count(key) == 1) << step;
  }
}

TEST(KeySetTest, KeepsTheLatestKeyWhenItClears) {
  KeySet set;
  for (int64_t n = 0; n < 1000; ++n) {
    set.insert(vectorsKey(2, n));
    ASSERT_TRUE(set.contains(vectorsKey(2, n))) << n;
  }
}

} // namespace
