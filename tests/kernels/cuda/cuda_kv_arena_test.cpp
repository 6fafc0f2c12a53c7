// cuda_kv_arena: the kernels' view of an arena carries the layout's sizes,
// as the attention kernels check them (host side: no device needed).
#include "kernels/cuda/cuda_kv_arena.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(CudaKvArenaTest, CarriesTheLayoutsSizesAndTheSlotStride) {
  const KvLayout layout{.n_layers = 3,
                        .n_kv_heads = 2,
                        .head_dim = 64,
                        .block_tokens = 16,
                        .dtype = WeightType::kF16};
  alignas(16) static std::byte base[16];
  const CudaKvArena arena = cuda_kv_arena(layout, base, layout.block_bytes() + 256);
  EXPECT_EQ(arena.base, base);
  EXPECT_EQ(arena.slot_bytes, layout.block_bytes() + 256);
  EXPECT_EQ(arena.block_tokens, 16);
  EXPECT_EQ(arena.n_kv_heads, 2);
  EXPECT_EQ(arena.head_dim, 64);
  EXPECT_EQ(arena.dtype, WeightType::kF16);
  EXPECT_EQ(arena.head_bytes, 16 * 64 * 2);
  EXPECT_EQ(arena.part_bytes, 2 * arena.head_bytes);
  EXPECT_EQ(arena.layer_bytes, 2 * arena.part_bytes);
  EXPECT_EQ(3 * arena.layer_bytes, layout.block_bytes());
}

TEST(CudaKvArenaTest, RefusesSlotsSmallerThanABlock) {
  const KvLayout layout{.n_layers = 1, .n_kv_heads = 1, .head_dim = 8, .dtype = WeightType::kF32};
  alignas(16) static std::byte base[16];
  EXPECT_DEATH(cuda_kv_arena(layout, base, layout.block_bytes() - 1), "hold no block");
}

}  // namespace
}  // namespace strata
