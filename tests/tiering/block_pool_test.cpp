#include "tiering/block_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

namespace strata {
namespace {

TEST(BlockPoolTest, AllocatesEveryBlockOnceThenRunsOut) {
  BlockPool pool(1000, 5);
  EXPECT_EQ(pool.block_bytes(), 1000);
  EXPECT_EQ(pool.slot_bytes(), 4096);
  EXPECT_EQ(pool.n_total(), 5);
  EXPECT_EQ(pool.n_free(), 5);
  std::set<BlockId> ids;
  for (int i = 0; i < 5; ++i) {
    std::optional<BlockId> id = pool.allocate();
    ASSERT_TRUE(id.has_value());
    EXPECT_TRUE(ids.insert(*id).second);
    EXPECT_EQ(pool.n_used(), i + 1);
  }
  EXPECT_EQ(ids, (std::set<BlockId>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(pool.allocate().has_value());
  EXPECT_EQ(pool.n_free(), 0);
  pool.check_integrity();

  pool.free(3);
  EXPECT_EQ(pool.n_free(), 1);
  EXPECT_FALSE(pool.is_allocated(3));
  EXPECT_EQ(pool.allocate(), std::optional<BlockId>(3));  // the freed slot comes back
  pool.check_integrity();
}

TEST(BlockPoolTest, SlotsArePageAlignedDisjointAndWritable) {
  BlockPool pool(5000, 4);  // rounds up to two pages a slot
  EXPECT_EQ(pool.slot_bytes(), 8192);
  std::vector<BlockId> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(*pool.allocate());
  for (BlockId id : ids) {
    std::byte* data = pool.data(id);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % BlockPool::kSlotAlignment, 0u);
    EXPECT_EQ(data[0], std::byte{0});  // fresh slots are zero
    for (int64_t i = 0; i < pool.block_bytes(); ++i) data[i] = static_cast<std::byte>(id + 1);
  }
  for (BlockId id : ids) {
    const std::byte* data = pool.data(id);
    EXPECT_EQ(data[0], static_cast<std::byte>(id + 1));
    EXPECT_EQ(data[pool.block_bytes() - 1], static_cast<std::byte>(id + 1));
  }
}

TEST(BlockPoolTest, RandomAllocateFreeKeepsExactAccounting) {
  BlockPool pool(64, 37);
  std::mt19937 rng(7);
  std::vector<BlockId> held;
  for (int step = 0; step < 2000; ++step) {
    if (held.empty() || (rng() % 3 != 0 && pool.n_free() > 0)) {
      std::optional<BlockId> id = pool.allocate();
      ASSERT_TRUE(id.has_value());
      held.push_back(*id);
    } else {
      size_t i = rng() % held.size();
      pool.free(held[i]);
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
    }
    ASSERT_EQ(pool.n_used(), static_cast<int64_t>(held.size()));
    ASSERT_EQ(pool.n_used() + pool.n_free(), pool.n_total());
    if (step % 100 == 0) pool.check_integrity();
  }
  std::set<BlockId> unique(held.begin(), held.end());
  EXPECT_EQ(unique.size(), held.size());
  pool.check_integrity();
}

TEST(BlockPoolDeathTest, DoubleFreeAndBadIdsAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  BlockPool pool(64, 2);
  BlockId id = *pool.allocate();
  pool.free(id);
  EXPECT_DEATH(pool.free(id), "double free");
  EXPECT_DEATH(pool.data(id), "free block");
  EXPECT_DEATH(pool.free(2), "outside");
  EXPECT_DEATH(pool.free(-1), "outside");
}

}  // namespace
}  // namespace strata
