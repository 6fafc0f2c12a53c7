// TierManager: the engine thread's side of the host (T1) <-> disk (T2) moves
// (DESIGN.md, "Tiers"). It keeps the PrefixCache's reference counts right
// while the TierWorker's I/O is in flight:
//
//  - write-through: a newly published full block is pinned (a reference) and
//    persisted; the pin is dropped when the write is durable or has failed,
//    after which the block may be evicted from host memory like any idle
//    block — it is "just dropped", a copy being on disk;
//  - promotion: for a waiting request whose prompt continues on disk beyond
//    what the cache holds, host blocks are allocated and loaded; each loaded
//    block is published under its hash, exactly as if it had been computed,
//    and held for the request until it is admitted (or gone), so that
//    admission then finds it with PrefixCache::match like any cached block.
//
// A load that fails (unreadable, corrupt) frees its block; the request then
// recomputes those tokens. Requests are named by an owner id (the sequence id)
// so that this file knows nothing of sequences.
//
// Threads: the engine thread only.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tiering/block_hash.h"
#include "tiering/block_pool.h"
#include "tiering/prefix_cache.h"
#include "tiering/tier_worker.h"

namespace strata {

class TierManager {
 public:
  // All three must outlive the manager; `pool` is the pool `cache` allocates from.
  TierManager(PrefixCache& cache, BlockPool& pool, TierWorker& worker);
  ~TierManager();  // drains the worker's moves of this manager
  TierManager(const TierManager&) = delete;
  TierManager& operator=(const TierManager&) = delete;

  // After PrefixCache::publish returned `block` as the cached block for
  // `hash`: persists it unless it is on disk or on its way there already.
  void write_through(BlockId block, const BlockHash& hash, const BlockHash& parent,
                     std::span<const int32_t> tokens);

  // Leading blocks of `chain` (with their tokens) that could be loaded.
  int64_t count_loadable(std::span<const BlockHash> chain, std::span<const int32_t> tokens) const;
  // Starts loading the blocks of `chain` into newly allocated host blocks for
  // `owner`, keeping at least `reserve` blocks allocatable. Returns how many
  // loads started (0: none; the owner then computes instead).
  int64_t start_loads(uint64_t owner, std::span<const BlockHash> chain,
                      std::span<const int32_t> tokens, int64_t reserve);
  bool is_loading(uint64_t owner) const;  // loads started and not all completed
  bool has_loaded(uint64_t owner) const;  // loads started (done or not)
  // Drops the owner's held references (after admission matched the blocks,
  // or when it is gone); loads still in flight complete into the cache.
  void release_owner(uint64_t owner);

  // Applies the worker's completions. Call at every engine wake-up.
  void poll();
  // Waits for every move in flight and applies them (shutdown, tests).
  void drain();

  // References this manager holds, per block (pins, loads, held blocks):
  // for Scheduler::check_integrity.
  void add_references(std::vector<int32_t>& refs) const;
  int64_t n_loads_started() const { return n_loads_started_; }
  int64_t n_blocks_loaded() const { return n_blocks_loaded_; }

 private:
  struct Move {
    BlockId block = 0;
    BlockHash hash;
    std::vector<int32_t> tokens;  // loads: to publish the block
    uint64_t owner = 0;           // loads
    bool is_write = false;
  };
  struct Owner {
    int64_t n_pending = 0;
    std::vector<BlockId> held;  // loaded, published, referenced for the owner
  };
  void finish(const TierCompletion& done);

  PrefixCache& cache_;
  BlockPool& pool_;
  TierWorker& worker_;
  uint64_t next_tag_ = 1;
  std::unordered_map<uint64_t, Move> moves_;  // in flight, by tag
  std::unordered_set<BlockHash, BlockHashHasher> persisting_;
  std::unordered_map<uint64_t, Owner> owners_;
  int64_t n_loads_started_ = 0;
  int64_t n_blocks_loaded_ = 0;
};

}  // namespace strata
