// LowerTiers: what the engine thread's scheduler sees of the tiers below the
// one it computes in (DESIGN.md, "Tiers"). Two implementations:
//  - HostDiskMover: the CPU backend computes in host memory (T1); below it is
//    the disk (T2);
//  - DeviceHostMover: a GPU backend computes in the VRAM arena (T0); below it is
//    pinned host memory (T1) and, optionally, the disk.
// Either way the scheduler's side is the same: full blocks it publishes may
// be copied down (write-through, demotion), and a waiting request whose
// prompt continues below the compute tier's cached prefix has those blocks
// brought up, asynchronously, for an owner (the sequence id), then finds
// them with PrefixCache::match like any cached block.
//
// Threads: the engine thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "tiering/block_hash.h"
#include "tiering/block_pool.h"

namespace strata {

// The pinned host tier of a GPU engine (absent on the CPU, where the
// compute tier is host memory).
struct HostTierStats {
  int64_t n_blocks_total = 0;
  int64_t n_blocks_cached = 0;
  int64_t n_block_hits = 0;      // blocks found in T1 by promotions
  int64_t n_blocks_promoted = 0; // T1 -> T0 copies completed
  int64_t n_blocks_demoted = 0;  // T0 -> T1 copies completed
  int64_t bytes_to_device = 0;
  int64_t bytes_to_host = 0;
  int64_t n_copies_in_flight = 0;
};

class LowerTiers {
 public:
  virtual ~LowerTiers() = default;

  // After PrefixCache::publish made `block` a cached block of the compute
  // tier: with write-through, starts copying it down.
  virtual void on_published(BlockId block) = 0;
  // Demotion under pressure: while fewer than `free_target` compute blocks
  // are free, copies the least recently used idle blocks that have no copy
  // below yet (a bounded number per call), so that evicting them loses
  // nothing. Call after each step.
  virtual void demote_cold(int64_t free_target) = 0;
  // A running sequence is preempted and its `blocks` are about to be
  // released: where they could be evicted at once (a small VRAM arena), its
  // cached blocks are copied down first, so that it resumes by promotion
  // rather than by recomputing. Returns when they are below.
  virtual void on_preempted(std::span<const BlockId> blocks) = 0;
  // Copies every cached block down to the disk; `done` runs on the engine
  // thread once all are durable (or failed), with the number of blocks on
  // disk then (0 without a disk tier). POST /v1/cache/persist.
  virtual void flush(std::function<void(int64_t n_on_disk)> done) = 0;
  // Drops what the lower tiers hold (idle blocks; the disk asynchronously);
  // returns the number of host blocks evicted. POST /v1/cache/clear.
  virtual int64_t clear() = 0;

  // How many leading blocks of `chain` (with their tokens) to bring up:
  // those found below, as far as loading them beats computing them (the
  // cost model; the choice is counted). 0: compute instead.
  virtual int64_t blocks_to_load(std::span<const BlockHash> chain,
                                 std::span<const int32_t> tokens) = 0;
  // A forward pass of `tokens` new tokens took `seconds`: the prefill rate.
  virtual void observe_step(int64_t tokens, double seconds) = 0;
  // Starts bringing up the blocks of `chain` into newly allocated compute
  // blocks for `owner`, keeping at least `reserve` blocks allocatable.
  // `cached_prefix`, the cached blocks the chain continues, is held for the
  // owner first: the allocations must not evict them. Returns how many loads
  // started (0: none; the owner then computes instead).
  virtual int64_t start_loads(uint64_t owner, std::span<const BlockId> cached_prefix,
                              std::span<const BlockHash> chain, std::span<const int32_t> tokens,
                              const BlockHash& parent_of_first, int64_t reserve) = 0;
  virtual bool is_loading(uint64_t owner) const = 0;  // loads started and not all completed
  virtual bool has_loaded(uint64_t owner) const = 0;  // loads started (done or not)
  // Drops the owner's held references (after admission matched the blocks,
  // or when it is gone); loads still in flight complete into the cache.
  virtual void release_owner(uint64_t owner) = 0;

  // Applies completed moves; returns how many. Call at every engine wake-up.
  virtual int64_t poll() = 0;
  // Waits for every move in flight and applies them (shutdown, tests).
  virtual void drain() = 0;

  // References held on compute blocks, per block: for Scheduler::check_integrity.
  virtual void add_references(std::vector<int32_t>& refs) const = 0;
  virtual int64_t n_blocks_loaded() const = 0;   // blocks read back from the disk
  virtual int64_t n_loads_declined() const = 0;  // prompts computed: faster than loading
  virtual std::optional<HostTierStats> host_tier_stats() const { return std::nullopt; }
};

}  // namespace strata
