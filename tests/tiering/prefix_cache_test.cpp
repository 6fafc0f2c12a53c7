#include "tiering/prefix_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

namespace strata {
namespace {

constexpr int64_t kBlockTokens = 4;

ModelFingerprint test_model() {
  constexpr std::string_view kName = "prefix-cache-test-model";
  return sha256({reinterpret_cast<const uint8_t*>(kName.data()), kName.size()});
}

// Chained hashes of the full blocks of `tokens`, as the scheduler computes them.
std::vector<BlockHash> chain_of(const std::vector<int32_t>& tokens) {
  std::vector<BlockHash> chain;
  BlockHash parent{};
  for (size_t start = 0; start + kBlockTokens <= tokens.size(); start += kBlockTokens) {
    parent = hash_block(parent, test_model(),
                        std::span<const int32_t>(tokens).subspan(start, kBlockTokens));
    chain.push_back(parent);
  }
  return chain;
}

std::span<const int32_t> block_tokens_of(const std::vector<int32_t>& tokens, size_t i) {
  return std::span<const int32_t>(tokens).subspan(i * kBlockTokens, kBlockTokens);
}

// `n_tokens` tokens starting at `first`: first, first + 1, ...
std::vector<int32_t> token_run(int32_t first, int n_tokens) {
  std::vector<int32_t> tokens;
  for (int i = 0; i < n_tokens; ++i) tokens.push_back(first + i);
  return tokens;
}

class PrefixCacheTest : public ::testing::Test {
 protected:
  // Allocates, "computes" and publishes every full block of `tokens`; returns
  // the block table (one reference held on each block).
  std::vector<BlockId> prefill(PrefixCache& cache, const std::vector<int32_t>& tokens) {
    std::vector<BlockHash> chain = chain_of(tokens);
    std::vector<BlockId> table;
    for (size_t i = 0; i < chain.size(); ++i) {
      std::optional<BlockId> block = cache.allocate();
      EXPECT_TRUE(block.has_value());
      if (!block) return table;
      table.push_back(cache.publish(chain[i], *block, block_tokens_of(tokens, i)));
      cache.check_integrity();
    }
    return table;
  }
};

TEST_F(PrefixCacheTest, AllocateAndReleaseAccountBackToAllFree) {
  BlockPool pool(64, 4);
  PrefixCache cache(pool, kBlockTokens);
  cache.check_integrity();
  std::vector<BlockId> held;
  for (int i = 0; i < 4; ++i) {
    std::optional<BlockId> block = cache.allocate();
    ASSERT_TRUE(block.has_value());
    EXPECT_EQ(cache.ref_count(*block), 1);
    EXPECT_FALSE(cache.is_cached(*block));
    held.push_back(*block);
    cache.check_integrity();
  }
  EXPECT_EQ(held, (std::vector<BlockId>{0, 1, 2, 3}));
  EXPECT_EQ(cache.n_free(), 0);
  EXPECT_EQ(cache.n_referenced(), 4);
  EXPECT_FALSE(cache.can_allocate(1));
  EXPECT_EQ(cache.allocate(), std::nullopt);  // nothing free, nothing idle
  cache.check_integrity();

  cache.acquire(2);
  EXPECT_EQ(cache.ref_count(2), 2);
  cache.check_integrity();
  cache.release(2);
  EXPECT_EQ(cache.ref_count(2), 1);
  EXPECT_TRUE(pool.is_allocated(2));
  cache.check_integrity();

  for (BlockId block : held) {
    cache.release(block);  // private: straight back to the pool
    EXPECT_FALSE(pool.is_allocated(block));
    cache.check_integrity();
  }
  EXPECT_EQ(cache.n_free(), 4);
  EXPECT_EQ(cache.n_referenced(), 0);
  EXPECT_EQ(cache.n_evictable(), 0);
  EXPECT_EQ(cache.n_cached(), 0);
  EXPECT_EQ(cache.counters().evictions, 0);
}

TEST_F(PrefixCacheTest, PublishedChainOfThreeBlocksMatchesInFull) {
  BlockPool pool(64, 8);
  PrefixCache cache(pool, kBlockTokens);
  std::vector<int32_t> prompt = token_run(100, 14);  // 3 full blocks + 2 tokens
  std::vector<BlockHash> chain = chain_of(prompt);
  ASSERT_EQ(chain.size(), 3u);

  std::vector<BlockId> table = prefill(cache, prompt);
  EXPECT_EQ(table, (std::vector<BlockId>{0, 1, 2}));  // new hashes: published in place
  EXPECT_EQ(cache.n_cached(), 3);
  for (BlockId block : table) EXPECT_TRUE(cache.is_cached(block));
  cache.release_table(table);
  cache.check_integrity();
  EXPECT_EQ(cache.n_evictable(), 3);
  EXPECT_EQ(cache.n_free(), 5);

  std::vector<BlockId> matched = cache.match(chain, prompt);
  cache.check_integrity();
  EXPECT_EQ(matched, table);
  for (BlockId block : matched) EXPECT_EQ(cache.ref_count(block), 1);
  EXPECT_EQ(cache.n_evictable(), 0);
  EXPECT_EQ(cache.counters().hits, 3);
  EXPECT_EQ(cache.counters().misses, 0);

  // A longer prompt with the same prefix: 3 hits, its 4th block a miss.
  std::vector<int32_t> longer = token_run(100, 16);
  matched = cache.match(chain_of(longer), longer);
  cache.check_integrity();
  EXPECT_EQ(matched, table);
  for (BlockId block : matched) EXPECT_EQ(cache.ref_count(block), 2);
  EXPECT_EQ(cache.counters().hits, 6);
  EXPECT_EQ(cache.counters().misses, 1);
}

TEST_F(PrefixCacheTest, PartialMatchStopsAtFirstMissingBlock) {
  BlockPool pool(64, 8);
  PrefixCache cache(pool, kBlockTokens);
  std::vector<int32_t> prompt = token_run(7, 12);
  std::vector<BlockHash> chain = chain_of(prompt);

  // Blocks 0 and 2 are cached, block 1 is not.
  BlockId first = *cache.allocate();
  BlockId third = *cache.allocate();
  EXPECT_EQ(cache.publish(chain[0], first, block_tokens_of(prompt, 0)), first);
  EXPECT_EQ(cache.publish(chain[2], third, block_tokens_of(prompt, 2)), third);
  cache.release(first);
  cache.release(third);
  cache.check_integrity();

  std::vector<BlockId> matched = cache.match(chain, prompt);
  cache.check_integrity();
  EXPECT_EQ(matched, (std::vector<BlockId>{first}));
  EXPECT_EQ(cache.ref_count(first), 1);
  EXPECT_EQ(cache.ref_count(third), 0);  // cached, but unreachable without block 1
  EXPECT_EQ(cache.n_evictable(), 1);
  EXPECT_EQ(cache.counters().hits, 1);
  EXPECT_EQ(cache.counters().misses, 2);

  // A prompt whose first block differs matches nothing.
  std::vector<int32_t> other = token_run(500, 12);
  EXPECT_TRUE(cache.match(chain_of(other), other).empty());
  cache.check_integrity();
  EXPECT_EQ(cache.counters().hits, 1);
  EXPECT_EQ(cache.counters().misses, 5);
}

TEST_F(PrefixCacheTest, StoredTokensMustMatchNotJustTheHash) {
  BlockPool pool(64, 8);
  PrefixCache cache(pool, kBlockTokens);
  std::vector<int32_t> prompt = token_run(1, 8);
  std::vector<BlockHash> chain = chain_of(prompt);

  // A collision, simulated: other tokens published under the prompt's first hash.
  std::vector<int32_t> impostor = {9, 9, 9, 9};
  BlockId forged = *cache.allocate();
  EXPECT_EQ(cache.publish(chain[0], forged, impostor), forged);
  cache.release(forged);
  cache.check_integrity();

  EXPECT_TRUE(cache.match(chain, prompt).empty());
  cache.check_integrity();
  EXPECT_EQ(cache.ref_count(forged), 0);
  EXPECT_EQ(cache.counters().hits, 0);
  EXPECT_EQ(cache.counters().misses, 2);

  // The genuine block published under the taken hash stays private: it is
  // neither deduplicated onto the impostor nor allowed to overwrite it.
  BlockId genuine = *cache.allocate();
  EXPECT_EQ(cache.publish(chain[0], genuine, block_tokens_of(prompt, 0)), genuine);
  cache.check_integrity();
  EXPECT_FALSE(cache.is_cached(genuine));
  EXPECT_TRUE(cache.is_cached(forged));
  EXPECT_EQ(cache.n_cached(), 1);
  cache.release(genuine);
  EXPECT_FALSE(pool.is_allocated(genuine));
  cache.check_integrity();
}

TEST_F(PrefixCacheTest, PublishingAnExistingHashDeduplicates) {
  BlockPool pool(64, 8);
  PrefixCache cache(pool, kBlockTokens);
  std::vector<int32_t> prompt = token_run(40, 4);
  std::vector<BlockHash> chain = chain_of(prompt);

  BlockId first = *cache.allocate();
  EXPECT_EQ(cache.publish(chain[0], first, prompt), first);
  EXPECT_EQ(cache.publish(chain[0], first, prompt), first);  // again: a no-op
  EXPECT_EQ(cache.ref_count(first), 1);
  cache.check_integrity();

  // A second sequence computed the same block concurrently.
  BlockId duplicate = *cache.allocate();
  EXPECT_NE(duplicate, first);
  EXPECT_EQ(cache.publish(chain[0], duplicate, prompt), first);
  cache.check_integrity();
  EXPECT_EQ(cache.ref_count(first), 2);
  EXPECT_FALSE(pool.is_allocated(duplicate));  // its only reference moved to `first`
  EXPECT_EQ(cache.n_cached(), 1);
  EXPECT_EQ(cache.n_free(), 7);

  // Dedupe onto an idle block takes it off the LRU.
  cache.release(first);
  cache.release(first);
  EXPECT_EQ(cache.n_evictable(), 1);
  BlockId third = *cache.allocate();
  EXPECT_EQ(cache.publish(chain[0], third, prompt), first);
  cache.check_integrity();
  EXPECT_EQ(cache.ref_count(first), 1);
  EXPECT_EQ(cache.n_evictable(), 0);
  EXPECT_EQ(cache.counters().evictions, 0);
}

TEST_F(PrefixCacheTest, EvictsLeastRecentlyUsedIdleBlocksOnly) {
  BlockPool pool(64, 4);
  PrefixCache cache(pool, kBlockTokens);
  // Four one-block prompts A, B, C, D in blocks 0..3.
  std::vector<std::vector<int32_t>> prompts = {token_run(10, 4), token_run(20, 4), token_run(30, 4),
                                               token_run(40, 4)};
  std::vector<BlockId> block_of;
  for (const auto& prompt : prompts) block_of.push_back(prefill(cache, prompt).at(0));
  EXPECT_EQ(block_of, (std::vector<BlockId>{0, 1, 2, 3}));
  for (BlockId block : block_of) cache.release(block);  // LRU: A B C D
  cache.check_integrity();
  EXPECT_EQ(cache.n_free(), 0);
  EXPECT_EQ(cache.n_evictable(), 4);

  // Touching A by a match and its release makes it the most recent: B C D A.
  ASSERT_EQ(cache.match(chain_of(prompts[0]), prompts[0]).size(), 1u);
  cache.release(block_of[0]);
  cache.check_integrity();

  std::optional<BlockId> got = cache.allocate();  // evicts B
  cache.check_integrity();
  EXPECT_EQ(got, block_of[1]);
  EXPECT_FALSE(cache.is_cached(block_of[1]));
  EXPECT_EQ(cache.counters().evictions, 1);
  EXPECT_TRUE(cache.match(chain_of(prompts[1]), prompts[1]).empty());  // gone
  cache.check_integrity();

  // D is in use: it must survive the next evictions (C, then A).
  ASSERT_EQ(cache.match(chain_of(prompts[3]), prompts[3]), (std::vector<BlockId>{block_of[3]}));
  EXPECT_EQ(cache.allocate(), block_of[2]);
  cache.check_integrity();
  EXPECT_EQ(cache.allocate(), block_of[0]);
  cache.check_integrity();
  EXPECT_EQ(cache.counters().evictions, 3);
  EXPECT_EQ(cache.allocate(), std::nullopt);  // all four referenced now
  cache.check_integrity();
  EXPECT_EQ(cache.counters().evictions, 3);
  EXPECT_TRUE(cache.is_cached(block_of[3]));
  EXPECT_EQ(cache.n_cached(), 1);
  EXPECT_EQ(cache.n_referenced(), 4);

  // A and C were evicted too; hits: A, D; misses: B.
  EXPECT_TRUE(cache.match(chain_of(prompts[0]), prompts[0]).empty());
  EXPECT_TRUE(cache.match(chain_of(prompts[2]), prompts[2]).empty());
  EXPECT_EQ(cache.counters().hits, 2);
  EXPECT_EQ(cache.counters().misses, 3);
  cache.check_integrity();
}

TEST_F(PrefixCacheTest, ReleasingATableEvictsItsTailBeforeItsHead) {
  BlockPool pool(64, 3);
  PrefixCache cache(pool, kBlockTokens);
  std::vector<int32_t> prompt = token_run(3, 12);
  std::vector<BlockId> table = prefill(cache, prompt);
  cache.release_table(table);  // LRU: block 2, 1, 0 (tail least recent)
  cache.check_integrity();

  EXPECT_EQ(cache.allocate(), table[2]);
  cache.check_integrity();
  std::vector<BlockId> matched = cache.match(chain_of(prompt), prompt);
  EXPECT_EQ(matched, (std::vector<BlockId>{table[0], table[1]}));  // the head still serves
  EXPECT_EQ(cache.counters().hits, 2);
  EXPECT_EQ(cache.counters().misses, 1);
  cache.check_integrity();
}

TEST_F(PrefixCacheTest, CanAllocateHasNoSideEffects) {
  BlockPool pool(64, 4);
  PrefixCache cache(pool, kBlockTokens);
  std::vector<int32_t> first = token_run(10, 4), second = token_run(20, 4);
  BlockId a = prefill(cache, first).at(0);
  BlockId b = prefill(cache, second).at(0);
  cache.release(a);
  cache.release(b);  // LRU: a b; one more block held privately
  BlockId held = *cache.allocate();
  cache.check_integrity();

  EXPECT_TRUE(cache.can_allocate(0));
  EXPECT_TRUE(cache.can_allocate(3));  // 1 free + 2 idle
  EXPECT_FALSE(cache.can_allocate(4));
  cache.check_integrity();
  EXPECT_EQ(cache.n_free(), 1);
  EXPECT_EQ(cache.n_evictable(), 2);
  EXPECT_EQ(cache.n_cached(), 2);
  EXPECT_EQ(cache.ref_count(held), 1);
  EXPECT_EQ(cache.counters().hits, 0);
  EXPECT_EQ(cache.counters().misses, 0);
  EXPECT_EQ(cache.counters().evictions, 0);

  // LRU order untouched: the free block goes first, then a, then b.
  BlockId free_block = *cache.allocate();
  EXPECT_NE(free_block, a);
  EXPECT_NE(free_block, b);
  EXPECT_EQ(cache.allocate(), a);
  EXPECT_EQ(cache.allocate(), b);
  EXPECT_FALSE(cache.can_allocate(1));
  cache.check_integrity();
}

TEST_F(PrefixCacheTest, PeekPlansAMatchWithoutItsEffects) {
  BlockPool pool(64, 6);
  PrefixCache cache(pool, kBlockTokens);
  std::vector<int32_t> prompt = token_run(100, 12);  // 3 full blocks
  std::vector<BlockId> table = prefill(cache, prompt);
  cache.release_table(table);  // all 3 idle; LRU: 2 1 0
  cache.acquire(table[0]);     // block 0 referenced again
  cache.check_integrity();

  std::vector<int32_t> longer = token_run(100, 20);  // the 3 cached blocks + 2 new ones
  std::vector<BlockHash> chain = chain_of(longer);
  for (int repeat = 0; repeat < 3; ++repeat) {  // an admission retried: no effect each time
    const PrefixCache::MatchPeek peek = cache.peek(chain, longer);
    EXPECT_EQ(peek.n_blocks, 3);
    EXPECT_EQ(peek.n_idle, 2);  // blocks 1 and 2
  }
  std::vector<int32_t> other = token_run(100, 8);
  other[5] = 7;  // the 2nd block differs: its hash and tokens are another chain's
  EXPECT_EQ(cache.peek(chain_of(other), other).n_blocks, 1);
  EXPECT_EQ(cache.peek(std::span<const BlockHash>(), {}).n_blocks, 0);
  EXPECT_EQ(cache.counters().hits, 0);
  EXPECT_EQ(cache.counters().misses, 0);
  EXPECT_EQ(cache.n_evictable(), 2);
  EXPECT_EQ(cache.ref_count(table[0]), 1);
  cache.check_integrity();

  // The one committed lookup counts once; its result is what peek promised.
  std::vector<BlockId> matched = cache.match(chain, longer);
  EXPECT_EQ(matched, table);
  EXPECT_EQ(cache.counters().hits, 3);
  EXPECT_EQ(cache.counters().misses, 2);
  EXPECT_EQ(cache.n_evictable(), 0);
  EXPECT_EQ(cache.peek(chain, longer).n_idle, 0);
  cache.release_table(matched);
  cache.release(table[0]);
  cache.check_integrity();
}

TEST_F(PrefixCacheTest, RandomOperationsKeepIntegrity) {
  BlockPool pool(64, 12);
  PrefixCache cache(pool, kBlockTokens);
  // Prompts that share prefixes: 5 families, each a run of 1..4 blocks.
  std::vector<std::vector<int32_t>> prompts;
  for (int32_t family = 0; family < 5; ++family) {
    for (int n_blocks = 1; n_blocks <= 4; ++n_blocks) {
      prompts.push_back(token_run(family * 1000, n_blocks * static_cast<int>(kBlockTokens)));
    }
  }
  std::mt19937 rng(11);
  std::vector<std::vector<BlockId>> tables;  // each holds one reference per entry
  int64_t n_lookups = 0, n_looked_up_blocks = 0;
  for (int step = 0; step < 3000; ++step) {
    const uint32_t op = rng() % 4;
    if (op == 0 && !tables.empty()) {
      size_t i = rng() % tables.size();
      cache.release_table(tables[i]);
      tables.erase(tables.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      // Admit a prompt: match, then compute and publish the rest if it fits.
      const std::vector<int32_t>& prompt = prompts[rng() % prompts.size()];
      std::vector<BlockHash> chain = chain_of(prompt);
      std::vector<BlockId> table = cache.match(chain, prompt);
      ++n_lookups;
      n_looked_up_blocks += static_cast<int64_t>(chain.size());
      const int64_t n_needed = static_cast<int64_t>(chain.size() - table.size());
      if (!cache.can_allocate(n_needed)) {
        cache.release_table(table);
      } else {
        for (size_t i = table.size(); i < chain.size(); ++i) {
          std::optional<BlockId> block = cache.allocate();
          ASSERT_TRUE(block.has_value());
          table.push_back(cache.publish(chain[i], *block, block_tokens_of(prompt, i)));
        }
        tables.push_back(table);
      }
    }
    cache.check_integrity();
    ASSERT_EQ(cache.counters().hits + cache.counters().misses, n_looked_up_blocks);
  }
  for (const auto& table : tables) cache.release_table(table);
  cache.check_integrity();
  EXPECT_EQ(cache.n_referenced(), 0);
  EXPECT_EQ(cache.n_free() + cache.n_evictable(), 12);
  EXPECT_GT(cache.counters().hits, 0);
  EXPECT_GT(cache.counters().evictions, 0);
  EXPECT_GT(n_lookups, 0);
}

TEST(PrefixCacheDeathTest, MisuseAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  BlockPool pool(64, 4);
  PrefixCache cache(pool, kBlockTokens);
  EXPECT_DEATH(cache.release(0), "release of unreferenced block 0");
  EXPECT_DEATH(cache.acquire(1), "acquire of free block 1");
  EXPECT_DEATH(cache.release(4), "outside");

  BlockId block = *cache.allocate();
  std::vector<int32_t> short_block = {1, 2, 3};
  EXPECT_DEATH(cache.publish(BlockHash{}, block, short_block), "a full block holds 4");
  std::vector<int32_t> tokens = token_run(1, 4);
  std::vector<BlockHash> chain = chain_of(tokens);
  cache.publish(chain[0], block, tokens);
  BlockHash other{};
  other.bytes[0] = 1;
  EXPECT_DEATH(cache.publish(other, block, tokens), "already cached");
  EXPECT_DEATH(cache.match(chain, std::span<const int32_t>(tokens).first(2)), "only 2 tokens");
  cache.release(block);
  EXPECT_DEATH(cache.release(block), "release of unreferenced block");
  EXPECT_DEATH(cache.publish(other, block, tokens), "publish of unreferenced block");

  BlockPool used_pool(64, 2);
  (void)used_pool.allocate();
  EXPECT_DEATH(PrefixCache(used_pool, kBlockTokens), "in use before");
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// A pin (a copy to a lower tier in flight) keeps an idle block from eviction
// without moving it in the LRU: once unpinned it is evicted in its old turn.
TEST_F(PrefixCacheTest, PinnedIdleBlocksAreSkippedByEvictionAndKeepTheirPlace) {
  BlockPool pool(64, 4);
  PrefixCache cache(pool, kBlockTokens);
  const std::vector<int32_t> a = token_run(100, 4), b = token_run(200, 4), c = token_run(300, 4);
  std::vector<BlockId> ta = prefill(cache, a), tb = prefill(cache, b), tc = prefill(cache, c);
  cache.release_table(ta);  // LRU: a, b, c (a coldest)
  cache.release_table(tb);
  cache.release_table(tc);
  cache.pin(ta[0]);
  EXPECT_EQ(cache.n_idle(), 3);
  EXPECT_EQ(cache.n_evictable(), 2);
  EXPECT_TRUE(cache.can_allocate(3));  // one free + two evictable
  EXPECT_FALSE(cache.can_allocate(4));
  EXPECT_EQ(cache.peek(chain_of(a), a).n_idle, 0) << "a pinned block is not evictable anyway";
  cache.check_integrity();

  std::optional<BlockId> x = cache.allocate();  // the free one
  std::optional<BlockId> y = cache.allocate();  // evicts b: a is pinned
  ASSERT_TRUE(x && y);
  EXPECT_EQ(cache.peek(chain_of(b), b).n_blocks, 0);
  EXPECT_EQ(cache.peek(chain_of(a), a).n_blocks, 1);
  cache.unpin(ta[0]);
  cache.check_integrity();
  std::optional<BlockId> z = cache.allocate();  // a again is the coldest, not c
  ASSERT_TRUE(z);
  EXPECT_EQ(cache.peek(chain_of(a), a).n_blocks, 0);
  EXPECT_EQ(cache.peek(chain_of(c), c).n_blocks, 1);
  for (BlockId block : {*x, *y, *z}) cache.release(block);
  cache.check_integrity();
}

}  // namespace
}  // namespace strata
