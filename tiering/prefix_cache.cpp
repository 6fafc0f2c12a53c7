#include "tiering/prefix_cache.h"

#include <algorithm>

#include "common/check.h"

namespace strata {

PrefixCache::PrefixCache(BlockPool& pool, int64_t block_tokens)
    : pool_(pool), block_tokens_(block_tokens) {
  STRATA_CHECK(block_tokens > 0, "block_tokens ", block_tokens);
  // Blocks allocated before the cache existed would have no reference count.
  STRATA_CHECK(pool.n_free() == pool.n_total(), "pool has ", pool.n_used(),
               " blocks in use before the prefix cache took it over");
  blocks_.resize(static_cast<size_t>(pool.n_total()));
  tokens_.resize(static_cast<size_t>(pool.n_total() * block_tokens));
}

bool PrefixCache::can_allocate(int64_t n) const { return n_free() + n_evictable() >= n; }

std::optional<BlockId> PrefixCache::allocate() {
  if (pool_.n_free() == 0) {
    if (n_evictable() == 0) return std::nullopt;
    evict_least_recently_used();
  }
  std::optional<BlockId> block = pool_.allocate();
  STRATA_CHECK(block.has_value(), "pool empty right after an eviction");
  BlockState& s = state(*block);
  STRATA_CHECK(s.ref_count == 0 && !s.cached, "pool handed out block ", *block, " with ref ",
               s.ref_count, " cached ", s.cached);
  s.ref_count = 1;
  return block;
}

// The coldest block that is not pinned; pinned ones are few (moves in flight).
void PrefixCache::evict_least_recently_used() {
  auto it = lru_.begin();
  while (it != lru_.end() && state(*it).pins > 0) ++it;
  STRATA_CHECK(it != lru_.end(), "nothing evictable");
  const BlockId victim = *it;
  BlockState& s = state(victim);
  STRATA_CHECK(s.cached && s.ref_count == 0, "LRU held block ", victim, " with ref ", s.ref_count);
  lru_.erase(it);
  block_of_hash_.erase(s.hash);
  s.cached = false;
  pool_.free(victim);
  ++counters_.evictions;
}

void PrefixCache::acquire(BlockId block) {
  BlockState& s = state(block);
  STRATA_CHECK(s.ref_count > 0 || s.cached, "acquire of free block ", block);
  if (s.ref_count == 0) {  // idle → referenced
    lru_.erase(s.lru_pos);
    if (s.pins > 0) --n_pinned_idle_;
  }
  ++s.ref_count;
}

void PrefixCache::pin(BlockId block) {
  BlockState& s = state(block);
  STRATA_CHECK(s.cached, "pin of block ", block, ", which is not cached");
  if (s.pins++ == 0 && s.ref_count == 0) ++n_pinned_idle_;
}

void PrefixCache::unpin(BlockId block) {
  BlockState& s = state(block);
  STRATA_CHECK(s.pins > 0, "unpin of block ", block, ", which is not pinned");
  if (--s.pins == 0 && s.ref_count == 0) --n_pinned_idle_;
}

void PrefixCache::release(BlockId block) {
  BlockState& s = state(block);
  STRATA_CHECK(s.ref_count > 0, "release of unreferenced block ", block);
  if (--s.ref_count > 0) return;
  if (s.cached) {
    s.lru_pos = lru_.insert(lru_.end(), block);  // most recently used
    if (s.pins > 0) ++n_pinned_idle_;
  } else {
    pool_.free(block);
  }
}

void PrefixCache::release_table(std::span<const BlockId> block_table) {
  for (auto it = block_table.rbegin(); it != block_table.rend(); ++it) release(*it);
}

BlockId PrefixCache::publish(const BlockHash& hash, BlockId block,
                             std::span<const int32_t> tokens, const BlockHash& parent) {
  BlockState& s = state(block);
  STRATA_CHECK(s.ref_count > 0, "publish of unreferenced block ", block);
  STRATA_CHECK(static_cast<int64_t>(tokens.size()) == block_tokens_, "publish of ", tokens.size(),
               " tokens, a full block holds ", block_tokens_);
  if (s.cached) {
    STRATA_CHECK(s.hash == hash, "block ", block, " already cached as ", s.hash.to_hex(),
                 ", published again as ", hash.to_hex());
    return block;
  }
  auto found = block_of_hash_.find(hash);
  if (found == block_of_hash_.end()) {
    std::ranges::copy(tokens, stored_tokens(block).begin());
    s.cached = true;
    s.hash = hash;
    s.parent = parent;
    block_of_hash_.emplace(hash, block);
    return block;
  }
  const BlockId existing = found->second;
  if (!std::ranges::equal(stored_tokens(existing), tokens)) return block;  // keep it private
  acquire(existing);
  release(block);
  return existing;
}

int64_t PrefixCache::evict_all_idle() {
  const int64_t n = n_evictable();
  for (int64_t i = 0; i < n; ++i) evict_least_recently_used();
  return n;
}

PrefixCache::CachedBlock PrefixCache::cached_block(BlockId block) const {
  const BlockState& s = state(block);
  STRATA_CHECK(s.cached, "block ", block, " is not cached");
  return {.block = block, .hash = &s.hash, .parent = &s.parent, .tokens = stored_tokens(block)};
}

std::vector<BlockId> PrefixCache::coldest_idle(int64_t n) const {
  std::vector<BlockId> blocks;
  for (auto it = lru_.begin(); it != lru_.end() && static_cast<int64_t>(blocks.size()) < n; ++it) {
    blocks.push_back(*it);
  }
  return blocks;
}

std::vector<BlockId> PrefixCache::cached_blocks() const {
  std::vector<BlockId> blocks;
  blocks.reserve(block_of_hash_.size());
  for (const auto& [hash, block] : block_of_hash_) blocks.push_back(block);
  return blocks;
}

std::vector<BlockId> PrefixCache::walk(std::span<const BlockHash> chain,
                                       std::span<const int32_t> tokens) const {
  const int64_t n_chain = static_cast<int64_t>(chain.size());
  STRATA_CHECK(static_cast<int64_t>(tokens.size()) >= n_chain * block_tokens_, "chain of ", n_chain,
               " blocks but only ", tokens.size(), " tokens");
  std::vector<BlockId> matched;
  for (int64_t i = 0; i < n_chain; ++i) {
    auto found = block_of_hash_.find(chain[static_cast<size_t>(i)]);
    if (found == block_of_hash_.end()) break;
    std::span<const int32_t> request_tokens =
        tokens.subspan(static_cast<size_t>(i * block_tokens_), static_cast<size_t>(block_tokens_));
    if (!std::ranges::equal(stored_tokens(found->second), request_tokens)) break;
    matched.push_back(found->second);
  }
  return matched;
}

PrefixCache::MatchPeek PrefixCache::peek(std::span<const BlockHash> chain,
                                         std::span<const int32_t> tokens) const {
  MatchPeek result;
  for (BlockId block : walk(chain, tokens)) {
    ++result.n_blocks;
    if (state(block).ref_count == 0 && state(block).pins == 0) ++result.n_idle;
  }
  return result;
}

std::vector<BlockId> PrefixCache::match(std::span<const BlockHash> chain,
                                        std::span<const int32_t> tokens) {
  std::vector<BlockId> matched = walk(chain, tokens);
  // References only after the walk: it stops at the first miss, and nothing
  // it looked at can change meanwhile (one thread).
  for (BlockId block : matched) acquire(block);
  const int64_t n_matched = static_cast<int64_t>(matched.size());
  counters_.hits += n_matched;
  counters_.misses += static_cast<int64_t>(chain.size()) - n_matched;
  return matched;
}

int32_t PrefixCache::ref_count(BlockId block) const { return state(block).ref_count; }

bool PrefixCache::is_cached(BlockId block) const { return state(block).cached; }

PrefixCache::BlockState& PrefixCache::state(BlockId block) {
  STRATA_CHECK(block >= 0 && block < n_total(), "block id ", block, " outside [0, ", n_total(),
               ")");
  return blocks_[static_cast<size_t>(block)];
}

const PrefixCache::BlockState& PrefixCache::state(BlockId block) const {
  STRATA_CHECK(block >= 0 && block < n_total(), "block id ", block, " outside [0, ", n_total(),
               ")");
  return blocks_[static_cast<size_t>(block)];
}

std::span<int32_t> PrefixCache::stored_tokens(BlockId block) {
  return std::span<int32_t>(tokens_).subspan(static_cast<size_t>(block * block_tokens_),
                                             static_cast<size_t>(block_tokens_));
}

std::span<const int32_t> PrefixCache::stored_tokens(BlockId block) const {
  return std::span<const int32_t>(tokens_).subspan(static_cast<size_t>(block * block_tokens_),
                                                   static_cast<size_t>(block_tokens_));
}

void PrefixCache::check_integrity() const {
  pool_.check_integrity();
  STRATA_CHECK(static_cast<int64_t>(blocks_.size()) == n_total(), "block states ", blocks_.size(),
               " for a pool of ", n_total());

  // Every LRU node names a distinct idle block whose lru_pos points back at it.
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    const BlockState& s = state(*it);
    STRATA_CHECK(pool_.is_allocated(*it), "LRU holds free block ", *it);
    STRATA_CHECK(s.cached && s.ref_count == 0, "LRU holds block ", *it, " with ref ", s.ref_count,
                 " cached ", s.cached);
    STRATA_CHECK(s.lru_pos == it, "block ", *it, " on the LRU twice or its lru_pos is stale");
  }

  int64_t n_free_seen = 0, n_referenced_seen = 0, n_idle_seen = 0, n_cached_seen = 0;
  int64_t n_pinned_idle_seen = 0;
  for (BlockId block = 0; block < n_total(); ++block) {
    const BlockState& s = blocks_[static_cast<size_t>(block)];
    STRATA_CHECK(s.ref_count >= 0 && s.pins >= 0, "block ", block, " has ref ", s.ref_count,
                 " pins ", s.pins);
    STRATA_CHECK(s.pins == 0 || s.cached, "block ", block, " is pinned but not cached");
    if (!pool_.is_allocated(block)) {
      STRATA_CHECK(s.ref_count == 0 && !s.cached, "free block ", block, " has ref ", s.ref_count,
                   " cached ", s.cached);
      ++n_free_seen;
      continue;
    }
    if (s.ref_count > 0) {
      ++n_referenced_seen;
    } else {
      STRATA_CHECK(s.cached, "allocated private block ", block, " has no reference (leak)");
      ++n_idle_seen;
      if (s.pins > 0) ++n_pinned_idle_seen;
    }
    if (s.cached) {
      ++n_cached_seen;
      auto found = block_of_hash_.find(s.hash);
      STRATA_CHECK(found != block_of_hash_.end() && found->second == block, "cached block ", block,
                   " is not indexed under its hash ", s.hash.to_hex());
    }
  }
  // Each cached block is indexed under its own hash and the counts agree, so
  // the index holds nothing else.
  STRATA_CHECK(n_cached_seen == n_cached(), "index holds ", n_cached(), " hashes for ",
               n_cached_seen, " cached blocks");
  STRATA_CHECK(n_idle_seen == n_idle(), "LRU holds ", n_idle(), " blocks, ", n_idle_seen,
               " are idle");
  STRATA_CHECK(n_pinned_idle_seen == n_pinned_idle_, "pinned idle blocks: ", n_pinned_idle_seen,
               " counted ", n_pinned_idle_);
  STRATA_CHECK(n_free_seen == n_free(), "free ", n_free_seen, " vs pool ", n_free());
  STRATA_CHECK(n_free_seen + n_referenced_seen + n_idle_seen == n_total(), "free ", n_free_seen,
               " + referenced ", n_referenced_seen, " + idle ", n_idle_seen, " != total ",
               n_total());
}

}  // namespace strata
