#include "tiering/device_host_mover.h"

#include <algorithm>
#include <utility>

#include "common/check.h"

namespace strata {

DeviceHostMover::DeviceHostMover(PrefixCache& device, BlockPool& host_pool, DeviceCopier& copier,
                       DiskWorker* disk, const LoadCostOptions& load_cost)
    : device_(device),
      host_pool_(host_pool),
      host_(host_pool, device.block_tokens()),
      copier_(copier),
      disk_(disk != nullptr ? std::make_unique<HostDiskMover>(host_, host_pool, *disk, load_cost)
                            : nullptr),
      block_tokens_(device.block_tokens()) {
  STRATA_CHECK(host_pool.block_bytes() == copier.block_bytes(), "host slots of ",
               host_pool.block_bytes(), " bytes for device blocks of ", copier.block_bytes());
}

DeviceHostMover::~DeviceHostMover() {
  for (auto& [id, owner] : owners_) {
    device_.release_table(owner.held);
    if (disk_) disk_->release_owner(id);
  }
  owners_.clear();
  drain();
  disk_.reset();  // waits for its writes
  host_.evict_all_idle();
  STRATA_CHECK(host_pool_.n_free() == host_pool_.n_total(), "host blocks still held: ",
               host_pool_.n_used());
}

// --- copying down ------------------------------------------------------------

void DeviceHostMover::on_published(BlockId block) {
  if (!disk_ || !disk_->writes_through()) return;
  copy_down(block);
  submit();
}

void DeviceHostMover::demote_cold(int64_t free_target) {
  if (device_.n_free() < free_target) {
    // Bounded work per step from the cold end, as HostDiskMover::demote_cold.
    constexpr int64_t kMaxCopies = 64;
    constexpr int64_t kMaxScanned = 4 * kMaxCopies;
    int64_t n_copied = 0;
    for (BlockId block : device_.coldest_idle(kMaxScanned)) {
      if (copy_down(block) && ++n_copied == kMaxCopies) break;
    }
    submit();
  }
  if (disk_) disk_->demote_cold(std::max<int64_t>(1, host_pool_.n_total() / 10));
}

void DeviceHostMover::on_preempted(std::span<const BlockId> blocks) {
  bool queued = false;
  for (BlockId block : blocks) {
    if (device_.is_cached(block)) queued = copy_down(block) || queued;
  }
  if (!queued) return;
  submit();
  copier_.wait_idle();
  finish_copies();  // the blocks are in T1 and unpinned (disk stages wait for poll())
}

bool DeviceHostMover::copy_down(BlockId block) {
  const PrefixCache::CachedBlock cached = device_.cached_block(block);
  if (copying_down_.contains(*cached.hash) || in_host(*cached.hash, cached.tokens)) return false;
  const std::optional<BlockId> host_block = host_.allocate();  // private, ref 1: ours
  if (!host_block) return false;  // T1 is all in use: eviction will drop the block
  device_.pin(block);  // its bytes stay put until copied; its LRU place is kept
  copying_down_.insert(*cached.hash);
  queue(Copy{.direction = BlockCopy::Direction::kToHost, .device_block = block,
             .host_block = *host_block, .hash = *cached.hash, .parent = *cached.parent,
             .tokens = {cached.tokens.begin(), cached.tokens.end()}, .owner = 0});
  return true;
}

bool DeviceHostMover::in_host(const BlockHash& hash, std::span<const int32_t> tokens) const {
  // peek() has no effects and allocates nothing: demote_cold asks this of up
  // to 256 blocks after every step.
  return host_.peek(std::span<const BlockHash>(&hash, 1), tokens).n_blocks == 1;
}

void DeviceHostMover::flush(std::function<void(int64_t)> done) {
  for (BlockId block : device_.cached_blocks()) copy_down(block);
  submit();
  flushes_.push_back(FlushWaiter{.last_tag = next_tag_ - 1, .done = std::move(done)});
  finish_flushes();
}

void DeviceHostMover::finish_flushes() {
  std::erase_if(flushes_, [&](FlushWaiter& waiter) {
    for (const auto& [tag, copy] : copies_) {
      if (tag <= waiter.last_tag && copy.direction == BlockCopy::Direction::kToHost) return false;
    }
    if (disk_) {
      disk_->flush(std::move(waiter.done));  // T1 -> T2, then done
    } else {
      waiter.done(0);
    }
    return true;
  });
}

int64_t DeviceHostMover::clear() {
  const int64_t n = host_.evict_all_idle();
  if (disk_) disk_->clear();
  return n;
}

// --- bringing up -------------------------------------------------------------

int64_t DeviceHostMover::blocks_to_load(std::span<const BlockHash> chain,
                                   std::span<const int32_t> tokens) {
  const int64_t n_host = host_.peek(chain, tokens).n_blocks;
  if (!disk_ || n_host == static_cast<int64_t>(chain.size())) return n_host;
  const auto rest = chain.subspan(static_cast<size_t>(n_host));
  const auto rest_tokens = tokens.subspan(static_cast<size_t>(n_host * block_tokens_));
  return n_host + disk_->blocks_to_load(rest, rest_tokens);
}

void DeviceHostMover::observe_step(int64_t tokens, double seconds) {
  if (disk_) disk_->observe_step(tokens, seconds);
}

int64_t DeviceHostMover::start_loads(uint64_t owner, std::span<const BlockId> cached_prefix,
                                std::span<const BlockHash> chain, std::span<const int32_t> tokens,
                                const BlockHash& parent_of_first, int64_t reserve) {
  if (chain.empty() || !device_.can_allocate(1 + reserve)) return 0;
  Owner& held = owners_[owner];
  held.reserve = reserve;
  for (BlockId block : cached_prefix) {
    device_.acquire(block);
    held.held.push_back(block);
  }
  const std::vector<BlockId> in_host = host_.match(chain, tokens);  // T1 hits, referenced
  int64_t n = copy_up(owner, in_host, chain, tokens, parent_of_first);
  const auto n_host = static_cast<int64_t>(in_host.size());
  if (disk_ && n == n_host && n_host < static_cast<int64_t>(chain.size())) {
    // The rest comes from disk into T1 first, then up (continue_disk_stages).
    const auto rest = chain.subspan(static_cast<size_t>(n_host));
    const auto rest_tokens = tokens.subspan(static_cast<size_t>(n_host * block_tokens_));
    const BlockHash parent = n_host == 0 ? parent_of_first : chain[static_cast<size_t>(n_host) - 1];
    const int64_t n_disk = disk_->start_loads(owner, {}, rest, rest_tokens, parent, /*reserve=*/0);
    if (n_disk > 0) {
      held.disk_chain.assign(rest.begin(), rest.begin() + n_disk);
      held.disk_tokens.assign(rest_tokens.begin(), rest_tokens.begin() + n_disk * block_tokens_);
      held.disk_parent = parent;
    }
    n += n_disk;
  }
  submit();
  return n;
}

int64_t DeviceHostMover::copy_up(uint64_t owner, std::span<const BlockId> host_blocks,
                            std::span<const BlockHash> chain, std::span<const int32_t> tokens,
                            const BlockHash& parent_of_first) {
  Owner& held = owners_.at(owner);
  size_t n = 0;
  for (; n < host_blocks.size() && device_.can_allocate(1 + held.reserve); ++n) {
    const std::optional<BlockId> block = device_.allocate();  // private, ref 1: the owner's
    STRATA_CHECK(block.has_value());
    const auto block_tokens = tokens.subspan(n * static_cast<size_t>(block_tokens_),
                                             static_cast<size_t>(block_tokens_));
    queue(Copy{.direction = BlockCopy::Direction::kToDevice, .device_block = *block,
               .host_block = host_blocks[n], .hash = chain[n],
               .parent = n == 0 ? parent_of_first : chain[n - 1],
               .tokens = {block_tokens.begin(), block_tokens.end()}, .owner = owner});
  }
  for (size_t i = n; i < host_blocks.size(); ++i) host_.release(host_blocks[i]);
  held.n_copies_pending += static_cast<int64_t>(n);
  return static_cast<int64_t>(n);
}

void DeviceHostMover::continue_disk_stages() {
  for (auto& [id, held] : owners_) {
    if (held.disk_chain.empty() || disk_->is_loading(id)) continue;
    // Whatever of the chain is now in T1 (in order: a failed load ends it).
    const std::vector<BlockId> loaded = host_.lookup(held.disk_chain, held.disk_tokens);
    for (BlockId block : loaded) host_.acquire(block);
    disk_->release_owner(id);  // its holds go; ours keep the blocks until copied
    const std::vector<BlockHash> chain = std::move(held.disk_chain);
    const std::vector<int32_t> tokens = std::move(held.disk_tokens);
    held.disk_chain.clear();
    held.disk_tokens.clear();
    copy_up(id, loaded, chain, tokens, held.disk_parent);
  }
}

bool DeviceHostMover::is_loading(uint64_t owner) const {
  auto it = owners_.find(owner);
  return it != owners_.end() &&
         (it->second.n_copies_pending > 0 || !it->second.disk_chain.empty());
}

void DeviceHostMover::release_owner(uint64_t owner) {
  auto it = owners_.find(owner);
  if (it == owners_.end()) return;
  device_.release_table(it->second.held);
  if (disk_) disk_->release_owner(owner);
  owners_.erase(it);
}

// --- completions -------------------------------------------------------------

void DeviceHostMover::queue(Copy copy) {
  const uint64_t tag = next_tag_++;
  unsubmitted_.push_back(BlockCopy{.direction = copy.direction,
                                   .device_block = copy.device_block,
                                   .host = host_pool_.data(copy.host_block), .tag = tag});
  copies_.emplace(tag, std::move(copy));
}

void DeviceHostMover::submit() {
  if (unsubmitted_.empty()) return;
  copier_.copy(unsubmitted_);
  unsubmitted_.clear();
}

int64_t DeviceHostMover::poll() {
  int64_t n = 0;
  if (disk_) {
    n += disk_->poll();
    continue_disk_stages();
  }
  n += finish_copies();
  submit();
  return n;
}

int64_t DeviceHostMover::finish_copies() {
  const std::vector<uint64_t> done = copier_.take_completed();
  for (uint64_t tag : done) finish(tag);
  if (!done.empty()) finish_flushes();
  return static_cast<int64_t>(done.size());
}

void DeviceHostMover::finish(uint64_t tag) {
  auto it = copies_.find(tag);
  STRATA_CHECK(it != copies_.end(), "a completed copy that was never queued (tag ", tag, ")");
  Copy copy = std::move(it->second);
  copies_.erase(it);
  const int64_t bytes = copier_.block_bytes();
  if (copy.direction == BlockCopy::Direction::kToHost) {
    copying_down_.erase(copy.hash);
    device_.unpin(copy.device_block);  // may be dropped from T0 once idle: T1 has it
    const BlockId kept = host_.publish(copy.hash, copy.host_block, copy.tokens, copy.parent);
    if (disk_ && host_.is_cached(kept)) disk_->on_published(kept);  // write-through to T2
    host_.release(kept);
    ++stats_.n_blocks_demoted;
    stats_.bytes_to_host += bytes;
    return;
  }
  host_.release(copy.host_block);
  ++stats_.n_blocks_promoted;
  stats_.bytes_to_device += bytes;
  // The owner's reference moves to the block publish() keeps (another
  // request may have computed the same block meanwhile).
  const BlockId kept = device_.publish(copy.hash, copy.device_block, copy.tokens, copy.parent);
  auto owner = owners_.find(copy.owner);
  if (owner == owners_.end()) {
    device_.release(kept);
    return;
  }
  owner->second.held.push_back(kept);
  --owner->second.n_copies_pending;
}

void DeviceHostMover::drain() {
  for (;;) {
    submit();
    copier_.wait_idle();
    poll();
    if (disk_) {
      disk_->drain();
      poll();  // disk stages continue: more copies up
    }
    const bool staged = std::ranges::any_of(
        owners_, [](const auto& entry) { return !entry.second.disk_chain.empty(); });
    if (copies_.empty() && !staged) return;
  }
}

// --- observation -------------------------------------------------------------

void DeviceHostMover::add_references(std::vector<int32_t>& refs) const {
  for (const auto& [id, owner] : owners_) {
    for (BlockId block : owner.held) ++refs[static_cast<size_t>(block)];
  }
  for (const auto& [tag, copy] : copies_) {
    if (copy.direction == BlockCopy::Direction::kToDevice) {
      ++refs[static_cast<size_t>(copy.device_block)];  // copies down pin, they hold no reference
    }
  }
}

int64_t DeviceHostMover::n_blocks_loaded() const { return disk_ ? disk_->n_blocks_loaded() : 0; }

int64_t DeviceHostMover::n_loads_declined() const { return disk_ ? disk_->n_loads_declined() : 0; }

std::optional<HostTierStats> DeviceHostMover::host_tier_stats() const {
  HostTierStats stats = stats_;
  stats.n_blocks_total = host_.n_total();
  stats.n_blocks_cached = host_.n_cached();
  stats.n_block_hits = host_.counters().hits;
  stats.n_copies_in_flight = static_cast<int64_t>(copies_.size());
  return stats;
}

}  // namespace strata
