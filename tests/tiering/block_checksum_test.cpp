#include "tiering/block_checksum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace strata {
namespace {

// LLVM's xxh3 test input (llvm/unittests/Support/xxhashTest.cpp): 2243 bytes
// from an xorshift64 generator starting at 1, low byte of each state.
std::vector<std::byte> xorshift_bytes(size_t n) {
  std::vector<std::byte> out(n);
  uint64_t x = 1;
  for (std::byte& b : out) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<std::byte>(x);
  }
  return out;
}

TEST(BlockChecksumTest, MatchesIndependentXxh3Vectors) {
  // Expected values from LLVM's own XXH3-64 implementation (its unit test),
  // which is separate code from xxhash.h. The lengths cover each of XXH3's
  // paths: 0, 1-3, 4-8, 9-16, 17-128, 129-240, and long inputs across stripe
  // (64 B) and block (1 KiB) boundaries.
  const std::vector<std::pair<size_t, uint64_t>> vectors = {
      {0, 0x2d06800538d394c2},    {1, 0xd0d496e05c553485},    {2, 0x84d625edb7055eac},
      {3, 0x6ea2d59aca5c3778},    {4, 0xbf65290914e80242},    {5, 0xc01fd099ad4fc8e4},
      {6, 0x9e3ea8187399caa5},    {7, 0x9da8b60540644f5a},    {8, 0xabc1413da6cd0209},
      {9, 0x8bc89400bfed51f6},    {16, 0x7e46916754d7c9b8},   {17, 0xed4be912ba5f836d},
      {32, 0xf59b59b58c304fd1},   {33, 0x9013fb74ca603e0c},   {64, 0xfa5271fcce0db1c3},
      {65, 0x79c42431727f1012},   {96, 0x591ee0ddf9c9ccd1},   {97, 0x8ffc6a3111fe19da},
      {128, 0x06a146ee9a2da378},  {129, 0xbc7138129bf065da},  {403, 0xcefeb3ffa532ad8c},
      {512, 0xcdfa6b6268e3650f},  {513, 0x4bb5d42742f9765f},  {2048, 0x330ce110cbb79eae},
      {2049, 0x3ba6afa0249fef9a}, {2240, 0xd61d4d2a94e926a8}, {2243, 0x0979f786a24edde7},
  };
  const std::vector<std::byte> input = xorshift_bytes(2243);
  for (const auto& [n, expected] : vectors) {
    EXPECT_EQ(block_checksum(std::span(input).first(n)), expected) << "length " << n;
  }
}

TEST(BlockChecksumTest, MatchesStreamingApiOnABlockSizedInput) {
  // A 512 KiB block (the Llama-3.2-1B fp16 block size) of byte i = 31 i + 7.
  // Expected value computed once with xxhash's streaming API
  // (XXH3_64bits_reset / _update in 4093-byte pieces / _digest), whose long-
  // input accumulation is a separate code path from the one-shot call.
  std::vector<std::byte> block(512 * 1024);
  for (size_t i = 0; i < block.size(); ++i) block[i] = static_cast<std::byte>(i * 31 + 7);
  EXPECT_EQ(block_checksum(block), 0x3e46aadfaac1a29fu);
}

TEST(BlockChecksumTest, EmptyInputIsFine) {
  EXPECT_EQ(block_checksum({}), 0x2d06800538d394c2u);
  std::vector<std::byte> none;
  EXPECT_EQ(block_checksum(none), 0x2d06800538d394c2u);
}

TEST(BlockChecksumTest, EveryFlippedBitChangesIt) {
  std::vector<std::byte> block = xorshift_bytes(4096);
  const uint64_t original = block_checksum(block);
  // Every bit of a few positions: first byte, a stripe edge, the middle, the
  // last byte (the tail is hashed by a separate final step).
  for (size_t pos : {size_t{0}, size_t{63}, size_t{64}, size_t{2048}, size_t{4095}}) {
    for (int bit = 0; bit < 8; ++bit) {
      block[pos] ^= std::byte{1} << bit;
      EXPECT_NE(block_checksum(block), original) << "byte " << pos << " bit " << bit;
      block[pos] ^= std::byte{1} << bit;
    }
  }
  EXPECT_EQ(block_checksum(block), original);
  // A torn write: the second half of the block left as zeros.
  std::vector<std::byte> torn = block;
  std::fill(torn.begin() + 2048, torn.end(), std::byte{0});
  EXPECT_NE(block_checksum(torn), original);
}

}  // namespace
}  // namespace strata
