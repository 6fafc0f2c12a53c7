#include "kernels/cpu/quant_blocks.h"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <vector>

#include "kernels/weight_type.h"

namespace strata {
namespace {

TEST(QuantBlocks, SizesMatchTheTypeTable) {
  EXPECT_EQ(sizeof(BlockQ8_0), weight_type_info(WeightType::kQ8_0).block_bytes);
  EXPECT_EQ(sizeof(BlockQ4_0), weight_type_info(WeightType::kQ4_0).block_bytes);
  EXPECT_EQ(sizeof(BlockQ4K), weight_type_info(WeightType::kQ4_K).block_bytes);
  EXPECT_EQ(sizeof(BlockQ5K), weight_type_info(WeightType::kQ5_K).block_bytes);
  EXPECT_EQ(sizeof(BlockQ6K), weight_type_info(WeightType::kQ6_K).block_bytes);
  EXPECT_EQ(weight_type_info(WeightType::kQ8_0).block_elems, static_cast<uint32_t>(kBlockElems0));
  EXPECT_EQ(weight_type_info(WeightType::kQ4_K).block_elems, static_cast<uint32_t>(kBlockElemsK));
}

// Field offsets of ggml's structs.
TEST(QuantBlocks, FieldOffsetsMatchGgml) {
  EXPECT_EQ(offsetof(BlockQ8_0, qs), 2u);
  EXPECT_EQ(offsetof(BlockQ4_0, qs), 2u);
  EXPECT_EQ(offsetof(BlockQ4K, dmin), 2u);
  EXPECT_EQ(offsetof(BlockQ4K, scales), 4u);
  EXPECT_EQ(offsetof(BlockQ4K, qs), 16u);
  EXPECT_EQ(offsetof(BlockQ5K, scales), 4u);
  EXPECT_EQ(offsetof(BlockQ5K, qh), 16u);
  EXPECT_EQ(offsetof(BlockQ5K, qs), 48u);
  EXPECT_EQ(offsetof(BlockQ6K, qh), 128u);
  EXPECT_EQ(offsetof(BlockQ6K, scales), 192u);
  EXPECT_EQ(offsetof(BlockQ6K, d), 208u);
  EXPECT_EQ(alignof(BlockQ4K), 1u);
}

// The packing worked out by hand in dequantize_test.cpp.
TEST(QuantBlocks, PacksScalesAndMinsAsGgml) {
  const std::array<ScaleMin6, 8> values = {{{5, 0}, {63, 7}, {32, 63}, {1, 40},
                                            {17, 16}, {33, 47}, {50, 63}, {12, 3}}};
  const std::array<uint8_t, 12> expected = {0x45, 0xbf, 0xe0, 0x01, 0x40, 0x87,
                                            0xff, 0x28, 0x01, 0xf1, 0xf2, 0x3c};
  EXPECT_EQ(pack_k4_scales_mins(values), expected);
  for (int j = 0; j < 8; ++j) {
    const ScaleMin6 got = unpack_k4_scale_min(j, expected);
    EXPECT_EQ(got.scale, values[j].scale) << j;
    EXPECT_EQ(got.min, values[j].min) << j;
  }
}

// Every 6-bit value in every slot survives packing, and leaves the other slots alone.
TEST(QuantBlocks, PackUnpackEveryValueInEverySlot) {
  for (int slot = 0; slot < 8; ++slot) {
    for (int v = 0; v < 64; ++v) {
      std::array<ScaleMin6, 8> values{};
      for (int j = 0; j < 8; ++j)
        values[j] = {static_cast<uint8_t>((j * 7 + 3) & 63),
                     static_cast<uint8_t>((j * 13 + 5) & 63)};
      values[slot] = {static_cast<uint8_t>(v), static_cast<uint8_t>(63 - v)};
      const std::array<uint8_t, 12> packed = pack_k4_scales_mins(values);
      for (int j = 0; j < 8; ++j) {
        const ScaleMin6 got = unpack_k4_scale_min(j, packed);
        ASSERT_EQ(got.scale, values[j].scale) << "slot " << slot << " v " << v << " j " << j;
        ASSERT_EQ(got.min, values[j].min) << "slot " << slot << " v " << v << " j " << j;
      }
    }
  }
}

TEST(QuantBlocks, AsBlocksViewsWholeBlocks) {
  std::vector<std::byte> bytes(3 * sizeof(BlockQ6K));
  const std::span<const BlockQ6K> blocks = as_blocks<BlockQ6K>(std::span<const std::byte>(bytes));
  EXPECT_EQ(blocks.size(), 3u);
  EXPECT_EQ(static_cast<const void*>(blocks.data()), static_cast<const void*>(bytes.data()));
}

TEST(QuantBlocksDeathTest, AsBlocksRejectsPartialBlocks) {
  std::vector<std::byte> bytes(sizeof(BlockQ4K) + 1);
  EXPECT_DEATH(as_blocks<BlockQ4K>(std::span<const std::byte>(bytes)), "whole number");
}

}  // namespace
}  // namespace strata
