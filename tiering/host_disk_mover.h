// HostDiskMover: the engine thread's side of the host (T1) <-> disk (T2) moves
// (DESIGN.md, "Tiers"): the LowerTiers of the CPU backend, which computes in
// host memory, and the lower half of a GPU engine's DeviceHostMover. It keeps the PrefixCache's
// reference counts right while the DiskWorker's I/O is in flight:
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
#include "tiering/block_pool.h"
#include "tiering/disk_worker.h"
#include "tiering/load_cost_model.h"
#include "tiering/lower_tiers.h"
#include "tiering/prefix_cache.h"

namespace strata {

class HostDiskMover final : public LowerTiers {
 public:
  // All must outlive the manager; `pool` is the pool `cache` allocates from.
  HostDiskMover(PrefixCache& cache, BlockPool& pool, DiskWorker& worker,
              const LoadCostOptions& load_cost = {});
  ~HostDiskMover() override;  // drains the worker's moves of this manager
  HostDiskMover(const HostDiskMover&) = delete;
  HostDiskMover& operator=(const HostDiskMover&) = delete;

  // LowerTiers (the disk below host memory).
  void on_published(BlockId block) override;
  void demote_cold(int64_t free_target) override;
  // Nothing: the blocks stay cached in host memory, where the CPU computes,
  // and a disk write is too slow to wait for.
  void on_preempted(std::span<const BlockId>) override {}
  void flush(std::function<void(int64_t n_on_disk)> done) override;
  int64_t clear() override;  // the disk's blocks; 0 host blocks
  int64_t blocks_to_load(std::span<const BlockHash> chain,
                         std::span<const int32_t> tokens) override;
  void observe_step(int64_t tokens, double seconds) override {
    cost_.observe_prefill(tokens, seconds);
  }
  int64_t start_loads(uint64_t owner, std::span<const BlockId> cached_prefix,
                      std::span<const BlockHash> chain, std::span<const int32_t> tokens,
                      const BlockHash& parent_of_first, int64_t reserve) override;
  bool is_loading(uint64_t owner) const override;
  bool has_loaded(uint64_t owner) const override;
  void release_owner(uint64_t owner) override;
  int64_t poll() override;
  void drain() override;
  void add_references(std::vector<int32_t>& refs) const override;
  int64_t n_blocks_loaded() const override { return n_blocks_loaded_; }
  int64_t n_loads_declined() const override { return n_loads_declined_; }

  // Leading blocks of `chain` (with their tokens) that are on disk.
  int64_t count_loadable(std::span<const BlockHash> chain, std::span<const int32_t> tokens) const;
  // Whether loading n_blocks blocks (of block_tokens tokens) beats computing
  // them, by the cost model; counts the refusals.
  bool worth_loading(int64_t n_blocks, int64_t block_tokens);
  bool writes_through() const { return worker_.writes_through(); }
  int64_t n_loads_started() const { return n_loads_started_; }

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
  DiskWorker& worker_;
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
