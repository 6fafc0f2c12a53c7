#include "engine/kv_sizing.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(KvSizingTest, Llama32_1BBlockIsHalfAMebibyteInF16) {
  // DESIGN.md: 16 tok x 16 layers x 2 x 8 heads x 64 x 2 B = 512 KiB.
  ModelConfig c{.n_embd = 2048, .n_layers = 16, .n_heads = 32, .n_kv_heads = 8, .head_dim = 64};
  KvLayout f16 = kv_layout_for(c);
  EXPECT_EQ(f16.block_tokens, 16);
  EXPECT_EQ(f16.block_bytes(), 512 * 1024);
  EXPECT_EQ(f16.block_bytes(), f16.block_tokens * c.kv_bytes_per_token(2));
  KvLayout f32 = kv_layout_for(c, 16, WeightType::kF32);
  EXPECT_EQ(f32.block_bytes(), 1024 * 1024);
}

TEST(KvSizingTest, OffsetsFollowLayerPartHeadTokenOrder) {
  ModelConfig c{.n_layers = 3, .n_kv_heads = 2, .head_dim = 4};
  KvLayout l = kv_layout_for(c, 5, WeightType::kF16);
  EXPECT_EQ(l.head_bytes(), 5 * 4 * 2);
  EXPECT_EQ(l.offset(0, KvPart::kKey, 0, 0), 0);
  EXPECT_EQ(l.offset(0, KvPart::kKey, 0, 1), 8);     // next token: one head_dim row
  EXPECT_EQ(l.offset(0, KvPart::kKey, 1, 0), 40);    // next kv head: block_tokens rows
  EXPECT_EQ(l.offset(0, KvPart::kValue, 0, 0), 80);  // V after all heads' K
  EXPECT_EQ(l.offset(1, KvPart::kKey, 0, 0), 160);   // next layer
  EXPECT_EQ(l.offset(2, KvPart::kValue, 1, 4) + 8, l.block_bytes());  // the last row ends the block
  EXPECT_EQ(l.blocks_for(0), 0);
  EXPECT_EQ(l.blocks_for(5), 1);
  EXPECT_EQ(l.blocks_for(6), 2);
}

}  // namespace
}  // namespace strata
