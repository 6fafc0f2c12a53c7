#include "tiering/block_hash.h"

#include <gtest/gtest.h>

#include <string_view>
#include <unordered_set>
#include <vector>

namespace strata {
namespace {

std::span<const uint8_t> as_bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(BlockHashTest, Sha256MatchesKnownVectors) {
  // FIPS 180-2 test vectors.
  EXPECT_EQ(sha256(as_bytes("")).to_hex(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256(as_bytes("abc")).to_hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(BlockHashTest, HashesParentModelAndLittleEndianTokens) {
  BlockHash parent = sha256(as_bytes("parent"));
  ModelFingerprint model = sha256(as_bytes("model"));
  std::vector<int32_t> tokens = {1, 258, -1};
  // The same bytes laid out by hand: parent ‖ model ‖ 01 00 00 00 02 01 00 00 ff ff ff ff.
  std::vector<uint8_t> manual(parent.bytes.begin(), parent.bytes.end());
  manual.insert(manual.end(), model.bytes.begin(), model.bytes.end());
  for (uint8_t b : {1, 0, 0, 0, 2, 1, 0, 0, 255, 255, 255, 255}) manual.push_back(b);
  EXPECT_EQ(hash_block(parent, model, tokens), sha256(manual));
}

TEST(BlockHashTest, EveryInputChangesTheHash) {
  BlockHash root;
  ModelFingerprint model_a = sha256(as_bytes("a"));
  ModelFingerprint model_b = sha256(as_bytes("b"));
  std::vector<int32_t> tokens = {5, 6, 7, 8};
  std::vector<int32_t> other_tokens = {5, 6, 7, 9};
  BlockHash h = hash_block(root, model_a, tokens);
  EXPECT_NE(h, hash_block(root, model_b, tokens));
  EXPECT_NE(h, hash_block(root, model_a, other_tokens));
  EXPECT_NE(hash_block(h, model_a, tokens), h);  // chained: same tokens, new parent
  std::unordered_set<BlockHash, BlockHashHasher> set = {h, hash_block(h, model_a, tokens)};
  EXPECT_EQ(set.size(), 2u);
}

}  // namespace
}  // namespace strata
