// PrefixCache: reference counts, content-hash sharing and LRU eviction of the
// blocks of one BlockPool. It is the only owner of the pool's allocate/free
// once constructed: the scheduler asks it for blocks, gives them back, and
// looks up prompts in it.
//
// Every block of the pool is in exactly one of three states:
//   free       in the pool's free list; ref 0; not cached.
//   referenced ref >= 1 (held by block tables or a match in flight); private
//              (the partial last block, or a full block not yet published) or
//              cached (published under its hash, matchable).
//   idle       cached with ref 0: still matchable, on the LRU list, evicted
//              (returned to the pool) only when allocate() finds the pool empty.
// A private block whose ref falls to 0 goes straight back to the pool.
//
// Like mini-sglang's match_prefix / insert_prefix, it takes hashes, ids and
// token spans only, never a request: the scheduler computes each full block's
// chained hash (tiering/block_hash.h) and keeps its own block tables.
//
// Threads: every method is called by the engine thread only (no lock).
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "tiering/block_hash.h"
#include "tiering/block_pool.h"

namespace strata {

class PrefixCache {
 public:
  // Cumulative since construction; read by /metrics.
  struct Counters {
    // Over all match() calls: blocks of the queried chains that were served
    // from the cache (hits) and blocks that were not (misses). A chain of n
    // blocks whose first k match adds k hits and n - k misses, so
    // hits / (hits + misses) is the block hit rate of lookups. A block after
    // the first miss counts as a miss even if cached (it cannot be used
    // without its parent's KV).
    int64_t hits = 0;
    int64_t misses = 0;
    // Idle cached blocks returned to the pool by allocate() to make room.
    int64_t evictions = 0;
  };

  // Borrows `pool`, which must outlive the cache, be entirely free now, and
  // from now on be allocated and freed only through this cache (its data()
  // stays for the backend). block_tokens > 0 is the number of tokens in a
  // full block: every published or matched block has exactly that many.
  PrefixCache(BlockPool& pool, int64_t block_tokens);
  PrefixCache(const PrefixCache&) = delete;
  PrefixCache& operator=(const PrefixCache&) = delete;

  // --- allocation (two-phase: can_allocate plans, allocate commits) -------

  // True when n blocks could be allocated now: free + idle >= n. No side
  // effects (no eviction, no counter, no LRU touch). O(1).
  bool can_allocate(int64_t n) const;
  // A private block with ref 1. When the pool is empty, first evicts the
  // least recently used idle block (it stops being matchable). nullopt when
  // nothing is free or idle — an expected outcome: the scheduler demotes,
  // preempts or waits. O(1).
  std::optional<BlockId> allocate();

  // --- reference counting -----------------------------------------------

  // ref +1 (sharing a block with another table). `block` must be referenced
  // or cached; an idle block leaves the LRU. O(1).
  void acquire(BlockId block);
  // ref -1. At 0 a private block returns to the pool; a cached block becomes
  // idle at the most recently used end of the LRU. Releasing a block with
  // ref 0 is a bug (check failure). O(1).
  void release(BlockId block);

  // A pin keeps a cached block's bytes in place (it is not evicted) without
  // changing its reference count or its place in the LRU: a copy to a lower
  // tier is reading them. Pins nest. O(1).
  void pin(BlockId block);
  void unpin(BlockId block);
  // Releases a block table's blocks last to first, so that of a finished
  // prefix the tail becomes less recently used than the head and is evicted
  // first: evicting a head first would strand its children, which match()
  // can no longer reach. O(n).
  void release_table(std::span<const BlockId> block_table);

  // --- sharing by content -----------------------------------------------

  // Registers a full block the caller computed and references, under its
  // chained hash; `tokens` (exactly block_tokens ids) are stored so that
  // match() can verify them. Returns the block the caller should keep in its
  // table, and the caller's reference moves to it:
  //  - `block` itself when the hash is new (now cached), or when `block` is
  //    already cached under this same hash (publishing again is a no-op);
  //  - the block already cached under `hash` with the same tokens (another
  //    sequence computed it first): a reference is taken on it and the
  //    caller's reference on `block` is released (dedupe: swap the entry);
  //  - `block`, still private, when `hash` is cached with different tokens
  //    (a collision or a caller bug: never serve it, never overwrite).
  // Publishing a block cached under another hash is a bug. O(block_tokens).
  // `parent` (the previous block's hash, zero for a first block) is kept
  // for the lower tiers' index.
  BlockId publish(const BlockHash& hash, BlockId block, std::span<const int32_t> tokens,
                  const BlockHash& parent = BlockHash{});

  // What match(chain, tokens) would return, without its effects: no
  // reference, no LRU touch, no counter. Lets admission plan first (does the
  // request fit once its matched blocks stop being evictable?) and call
  // match() once, when it commits. O(matched * block_tokens).
  struct MatchPeek {
    int64_t n_blocks = 0;  // length of the prefix match() would return
    int64_t n_idle = 0;    // of those, evictable now (counted by n_evictable() until matched)
  };
  MatchPeek peek(std::span<const BlockHash> chain, std::span<const int32_t> tokens) const;
  // The blocks match() would return, without its effects.
  std::vector<BlockId> lookup(std::span<const BlockHash> chain,
                              std::span<const int32_t> tokens) const {
    return walk(chain, tokens);
  }

  // The longest prefix of `chain` whose blocks are all cached with stored
  // tokens equal to the request's: chain[i] is checked against tokens
  // [i * block_tokens, (i + 1) * block_tokens), so `tokens` must cover the
  // whole chain. The hash alone is never trusted. Takes a reference on each
  // returned block (idle ones leave the LRU), so a later can_allocate() does
  // not count them as evictable; a caller that then cannot admit the request
  // gives them back with release_table(). Adds to hits and misses (see
  // Counters): call once per lookup, not once per admission retry (plan
  // with peek()).
  // O(matched * block_tokens).
  std::vector<BlockId> match(std::span<const BlockHash> chain, std::span<const int32_t> tokens);

  // Evicts every evictable block (returns them to the pool); referenced and
  // pinned blocks stay cached. Returns how many. O(idle).
  int64_t evict_all_idle();

  // --- observation --------------------------------------------------------

  // A cached block as the lower tiers need it.
  struct CachedBlock {
    BlockId block = 0;
    const BlockHash* hash = nullptr;
    const BlockHash* parent = nullptr;
    std::span<const int32_t> tokens;
  };
  CachedBlock cached_block(BlockId block) const;  // block must be cached
  // Up to n idle blocks, least recently used first. O(n).
  std::vector<BlockId> coldest_idle(int64_t n) const;
  // Every cached block (referenced or idle), in no particular order. O(cached).
  std::vector<BlockId> cached_blocks() const;

  int64_t block_tokens() const { return block_tokens_; }
  int64_t n_total() const { return pool_.n_total(); }
  int64_t n_free() const { return pool_.n_free(); }                          // in the pool
  int64_t n_idle() const { return static_cast<int64_t>(lru_.size()); }  // cached, ref 0
  int64_t n_evictable() const { return n_idle() - n_pinned_idle_; }   // idle, not pinned
  int64_t n_cached() const { return static_cast<int64_t>(block_of_hash_.size()); }
  int64_t n_referenced() const { return n_total() - n_free() - n_idle(); }
  int32_t ref_count(BlockId block) const;
  bool is_cached(BlockId block) const;
  const Counters& counters() const { return counters_; }

  // Aborts unless: the pool is consistent; every block is exactly one of
  // free / referenced / idle with ref >= 0; the LRU lists exactly the idle
  // blocks, once each, and each one's lru_pos points at its node; the hash
  // index and the blocks' hashes name each other; free + referenced + idle
  // == total. O(n_total); for tests and debug builds.
  void check_integrity() const;

 private:
  struct BlockState {
    int32_t ref_count = 0;                 // references held by block tables and matches in flight
    int32_t pins = 0;                      // copies to a lower tier in flight (cached blocks)
    bool cached = false;                   // published: block_of_hash_[hash] == this block
    BlockHash hash;                        // valid when cached
    BlockHash parent;                      // valid when cached
    std::list<BlockId>::iterator lru_pos;  // valid when idle (cached && ref_count == 0)
  };

  BlockState& state(BlockId block);
  const BlockState& state(BlockId block) const;
  std::span<int32_t> stored_tokens(BlockId block);
  std::span<const int32_t> stored_tokens(BlockId block) const;
  void evict_least_recently_used();
  // Leading blocks of `chain` cached with the request's tokens (match()'s walk).
  std::vector<BlockId> walk(std::span<const BlockHash> chain,
                            std::span<const int32_t> tokens) const;

  BlockPool& pool_;
  int64_t block_tokens_ = 0;
  std::vector<BlockState> blocks_;  // indexed by BlockId, size n_total
  // [n_total][block_tokens] token ids of each cached block (row valid when cached).
  std::vector<int32_t> tokens_;
  std::unordered_map<BlockHash, BlockId, BlockHashHasher> block_of_hash_;  // cached blocks only
  // Idle blocks, least recently used at the front; release() appends.
  std::list<BlockId> lru_;
  int64_t n_pinned_idle_ = 0;  // idle blocks with pins: on the LRU, not evictable
  Counters counters_;
};

}  // namespace strata
