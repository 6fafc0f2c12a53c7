// DeviceHostMover: the LowerTiers of a GPU engine, which computes in the VRAM
// arena (T0). Below it: pinned host memory (T1, a PrefixCache of its own over
// the host BlockPool) and, optionally, the disk (T2, through a HostDiskMover
// over that host cache). DESIGN.md, "Tiers".
//
//  - Demotion T0 -> T1: under pressure the coldest idle T0 blocks without a
//    copy in T1 are copied down (pinned in T0 meanwhile), so that evicting
//    them loses nothing; a block with a copy in T1 is just dropped. With
//    write-through (--persist all) every published block is copied down at
//    once, and from T1 written to disk by the HostDiskMover, which also
//    demotes cold T1 blocks to disk before T1 evicts them.
//  - Promotion: blocks found in T1 are copied up into newly allocated T0
//    blocks (always worth it: a block crosses PCIe in tens of microseconds,
//    computing its 16 tokens takes far longer); blocks found only on disk,
//    where the cost model says so, are first loaded into T1 for the owner
//    and then copied up. Each block copied up is published in T0 under its
//    hash and held for the owner, so admission matches it like any cached
//    block.
//  - Preemption is the same move: a preempted sequence's published blocks
//    are copied down before they are released (on_preempted), and promoted
//    when it resumes.
//
// Copies go through a DeviceCopier (a copy stream): they overlap the forward
// passes of the sequences that keep running.
//
// Threads: the engine thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tiering/block_hash.h"
#include "tiering/block_pool.h"
#include "tiering/device_copier.h"
#include "tiering/disk_worker.h"
#include "tiering/host_disk_mover.h"
#include "tiering/load_cost_model.h"
#include "tiering/lower_tiers.h"
#include "tiering/prefix_cache.h"

namespace strata {

class DeviceHostMover final : public LowerTiers {
 public:
  // `device`: the engine's cache of T0 blocks. `host_pool`: T1, entirely
  // free, as many bytes per block as the copier moves. `disk`: T2, or null.
  // All must outlive the tier.
  DeviceHostMover(PrefixCache& device, BlockPool& host_pool, DeviceCopier& copier, DiskWorker* disk,
             const LoadCostOptions& load_cost = {});
  // Releases what owners hold, waits for the moves in flight and leaves the
  // host pool entirely free.
  ~DeviceHostMover() override;
  DeviceHostMover(const DeviceHostMover&) = delete;
  DeviceHostMover& operator=(const DeviceHostMover&) = delete;

  void on_published(BlockId block) override;
  void demote_cold(int64_t free_target) override;
  // Copies the cached blocks without a T1 copy down and waits for them: a
  // block crosses PCIe in microseconds, recomputing it costs far more.
  void on_preempted(std::span<const BlockId> blocks) override;
  void flush(std::function<void(int64_t n_on_disk)> done) override;
  int64_t clear() override;
  int64_t blocks_to_load(std::span<const BlockHash> chain,
                         std::span<const int32_t> tokens) override;
  void observe_step(int64_t tokens, double seconds) override;
  int64_t start_loads(uint64_t owner, std::span<const BlockId> cached_prefix,
                      std::span<const BlockHash> chain, std::span<const int32_t> tokens,
                      const BlockHash& parent_of_first, int64_t reserve) override;
  bool is_loading(uint64_t owner) const override;
  bool has_loaded(uint64_t owner) const override { return owners_.contains(owner); }
  void release_owner(uint64_t owner) override;
  int64_t poll() override;
  void drain() override;
  void add_references(std::vector<int32_t>& refs) const override;
  int64_t n_blocks_loaded() const override;
  int64_t n_loads_declined() const override;
  std::optional<HostTierStats> host_tier_stats() const override;

  const PrefixCache& host_cache() const { return host_; }

 private:
  struct Copy {
    BlockCopy::Direction direction = BlockCopy::Direction::kToHost;
    BlockId device_block = 0;
    BlockId host_block = 0;
    BlockHash hash;
    BlockHash parent;
    std::vector<int32_t> tokens;
    uint64_t owner = 0;  // copies up
  };
  struct Owner {
    std::vector<BlockId> held;  // T0 blocks: the cached prefix, then those copied up
    int64_t n_copies_pending = 0;
    int64_t reserve = 0;
    // Blocks being loaded from disk into T1 by the HostDiskMover, to be copied
    // up once it is done with them.
    std::vector<BlockHash> disk_chain;
    std::vector<int32_t> disk_tokens;
    BlockHash disk_parent;
  };
  struct FlushWaiter {
    uint64_t last_tag = 0;  // T1 has every block copied down by copies up to this tag
    std::function<void(int64_t)> done;
  };

  // Copies a cached T0 block down unless T1 has it or it is on its way.
  bool copy_down(BlockId block);
  // Copies up the T1 blocks `host_blocks` (referenced for this, one
  // reference each, released here or when the copy completes) of `chain`
  // into new T0 blocks for `owner`; returns how many copies started.
  int64_t copy_up(uint64_t owner, std::span<const BlockId> host_blocks,
                  std::span<const BlockHash> chain, std::span<const int32_t> tokens,
                  const BlockHash& parent_of_first);
  void queue(Copy copy);
  void submit();
  void finish(uint64_t tag);
  int64_t finish_copies();  // the copier's completions; how many
  // Owners whose disk loads are done: their blocks now in T1 are copied up.
  void continue_disk_stages();
  void finish_flushes();
  bool in_host(const BlockHash& hash, std::span<const int32_t> tokens) const;

  PrefixCache& device_;
  BlockPool& host_pool_;
  PrefixCache host_;
  DeviceCopier& copier_;
  std::unique_ptr<HostDiskMover> disk_;  // T1 <-> T2; null without a disk tier
  const int64_t block_tokens_;
  uint64_t next_tag_ = 1;
  std::unordered_map<uint64_t, Copy> copies_;  // in flight, by tag
  std::vector<BlockCopy> unsubmitted_;
  std::unordered_set<BlockHash, BlockHashHasher> copying_down_;
  std::unordered_map<uint64_t, Owner> owners_;
  std::vector<FlushWaiter> flushes_;
  HostTierStats stats_;
};

}  // namespace strata
