// TierManager: the engine thread's side of the host (T1) <-> disk (T2) moves
// (DESIGN.md, "Tiers"). It keeps the PrefixCache's reference counts right
// while the TierWorker's I/O is in flight:
//
//  - write-through (--persist all): a newly published full block is pinned
//    (PrefixCache::pin: not evictable, its LRU place kept) and persisted; the
//    pin is dropped when the write is durable or has failed, after which the
//    block may be evicted from host memory like any idle block — it is "just
//    dropped", a copy being on disk;
//  - demotion (any policy): under pressure, the coldest idle blocks without a
//    copy on disk are written down (pinned the same way) before eviction can
//    reach them;
//  - promotion: for a waiting request whose prompt continues on disk beyond
//    what the cache holds, where the cost model says loading beats computing
//    (tiering/load_cost_model.h), host blocks are allocated and loaded; each loaded
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

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tiering/block_hash.h"
#include "tiering/block_mirror.h"
#include "tiering/load_cost_model.h"
#include "tiering/block_pool.h"
#include "tiering/prefix_cache.h"
#include "tiering/tier_worker.h"

namespace strata {

class TierManager {
 public:
  // All must outlive the manager; `pool` is the pool `cache` allocates from.
  // `mirror`: set when blocks are computed in device memory (null on the CPU).
  TierManager(PrefixCache& cache, BlockPool& pool, TierWorker& worker,
              BlockMirror* mirror = nullptr, const LoadCostOptions& load_cost = {});
  ~TierManager();  // drains the worker's moves of this manager
  TierManager(const TierManager&) = delete;
  TierManager& operator=(const TierManager&) = delete;

  // After PrefixCache::publish made `block` a cached block: with write-through
  // (--persist all), persists it unless it is on disk or on its way there.
  void on_published(BlockId block);
  // Demotion under pressure: while fewer than `free_target` blocks are free,
  // writes the least recently used idle blocks that have no copy on disk
  // yet (a bounded number per call), so that evicting them loses nothing.
  // Call after each step.
  void demote_cold(int64_t free_target);
  // Writes every cached block that has no copy on disk; `done` runs on the
  // engine thread once all of them are durable (or failed), with the number
  // of blocks on disk then. POST /v1/cache/persist.
  void flush(std::function<void(int64_t n_on_disk)> done);

  // Leading blocks of `chain` (with their tokens) that could be loaded.
  int64_t count_loadable(std::span<const BlockHash> chain, std::span<const int32_t> tokens) const;
  // Whether loading n_blocks blocks (of block_tokens tokens) beats computing
  // them, by the cost model; counts the refusals.
  bool worth_loading(int64_t n_blocks, int64_t block_tokens);
  // A forward pass of `tokens` new tokens took `seconds`: the prefill rate.
  void observe_step(int64_t tokens, double seconds) { cost_.observe_prefill(tokens, seconds); }
  // Starts loading the blocks of `chain` into newly allocated host blocks for
  // `owner`, keeping at least `reserve` blocks allocatable. `cached_prefix`,
  // the cached blocks the chain continues, is held for the owner first: the
  // allocations must not evict them. Returns how many loads started (0:
  // none; the owner then computes instead).
  int64_t start_loads(uint64_t owner, std::span<const BlockId> cached_prefix,
                      std::span<const BlockHash> chain, std::span<const int32_t> tokens,
                      const BlockHash& parent_of_first, int64_t reserve);
  bool is_loading(uint64_t owner) const;  // loads started and not all completed
  bool has_loaded(uint64_t owner) const;  // loads started (done or not)
  // Drops the owner's held references (after admission matched the blocks,
  // or when it is gone); loads still in flight complete into the cache.
  void release_owner(uint64_t owner);

  // Applies the worker's completions; returns how many. Call at every
  // engine wake-up.
  int64_t poll();
  // Waits for every move in flight and applies them (shutdown, tests).
  void drain();

  // References this manager holds, per block (loads, held blocks):
  // for Scheduler::check_integrity.
  void add_references(std::vector<int32_t>& refs) const;
  int64_t n_loads_started() const { return n_loads_started_; }
  int64_t n_blocks_loaded() const { return n_blocks_loaded_; }
  int64_t n_loads_declined() const { return n_loads_declined_; }

 private:
  enum class MoveKind { kWriteThrough, kDemotion, kLoad };
  struct Move {
    MoveKind kind = MoveKind::kLoad;
    BlockId block = 0;
    BlockHash hash;
    BlockHash parent;             // loads: to publish the block
    std::vector<int32_t> tokens;  // loads: to publish the block
    uint64_t owner = 0;           // loads
  };
  struct FlushWaiter {
    uint64_t last_tag = 0;  // done when no write with a tag up to this is left
    std::function<void(int64_t)> done;
  };
  // Pins `block` and asks the worker to write it; false when it is on disk
  // or being written already.
  bool write(BlockId block, MoveKind kind);
  void finish_flushes();
  struct Owner {
    int64_t n_pending = 0;
    std::vector<BlockId> held;  // loaded, published, referenced for the owner
    int64_t n_started = 0;      // loads of this round, for the disk rate
    std::chrono::steady_clock::time_point started{};
  };
  void finish(const TierCompletion& done);

  PrefixCache& cache_;
  BlockPool& pool_;
  TierWorker& worker_;
  BlockMirror* mirror_;
  uint64_t next_tag_ = 1;
  std::unordered_map<uint64_t, Move> moves_;  // in flight, by tag
  std::unordered_set<BlockHash, BlockHashHasher> persisting_;
  std::unordered_map<uint64_t, Owner> owners_;
  std::vector<FlushWaiter> flushes_;
  int64_t n_loads_started_ = 0;
  int64_t n_blocks_loaded_ = 0;
  int64_t n_loads_declined_ = 0;
  LoadCostModel cost_;
};

}  // namespace strata
