#include "tiering/host_disk_mover.h"

#include <algorithm>

#include "common/check.h"
#include "common/crash_point.h"

namespace strata {

HostDiskMover::HostDiskMover(PrefixCache& cache, BlockPool& pool, DiskWorker& worker,
                         const LoadCostOptions& load_cost)
    : cache_(cache), pool_(pool), worker_(worker), cost_(load_cost) {}

HostDiskMover::~HostDiskMover() {
  for (auto& [id, owner] : owners_) cache_.release_table(owner.held);
  owners_.clear();  // nobody is waiting any more: loaded blocks stay cached, unheld
  drain();
}

void HostDiskMover::on_published(BlockId block) {
  if (worker_.writes_through()) write(block, MoveKind::kWriteThrough);
}

bool HostDiskMover::write(BlockId block, MoveKind kind) {
  // With writing off (a write failed), a block would only fail again at once,
  // and its failure would wake the engine to try the next: an idle spin. Once
  // the back-off has passed, the next block offered is the probe.
  if (!worker_.takes_writes()) return false;
  const PrefixCache::CachedBlock cached = cache_.cached_block(block);
  if (persisting_.contains(*cached.hash) || worker_.contains(*cached.hash)) return false;
  cache_.pin(block);  // the bytes must stay put until written; its LRU place is kept
  const uint64_t tag = next_tag_++;
  moves_.emplace(tag, Move{.kind = kind, .block = block, .hash = *cached.hash, .parent = {},
                           .tokens = {}, .owner = 0});
  persisting_.insert(*cached.hash);
  worker_.persist(*cached.hash, *cached.parent, cached.tokens, pool_.data(block), tag);
  crash_point(kind == MoveKind::kDemotion ? "tier.demotion_queued" : "tier.write_through_queued");
  return true;
}

void HostDiskMover::demote_cold(int64_t free_target) {
  if (cache_.n_free() >= free_target) return;
  // Up to kMaxWrites new writes per call from the cold end, skipping blocks
  // that are on disk already: bounded work per step, and enough to stay
  // ahead of eviction, which takes the coldest first.
  constexpr int64_t kMaxWrites = 64;
  constexpr int64_t kMaxScanned = 4 * kMaxWrites;
  int64_t n_written = 0;
  for (BlockId block : cache_.coldest_idle(kMaxScanned)) {
    if (write(block, MoveKind::kDemotion) && ++n_written == kMaxWrites) break;
  }
}

void HostDiskMover::flush(std::function<void(int64_t)> done) {
  for (BlockId block : cache_.cached_blocks()) write(block, MoveKind::kWriteThrough);
  flushes_.push_back(FlushWaiter{.last_tag = next_tag_ - 1, .done = std::move(done)});
  finish_flushes();  // at once when nothing was left to write
}

void HostDiskMover::finish_flushes() {
  std::erase_if(flushes_, [&](FlushWaiter& waiter) {
    for (const auto& [tag, move] : moves_) {
      if (tag <= waiter.last_tag && move.kind != MoveKind::kLoad) return false;
    }
    waiter.done(worker_.stats().n_blocks);
    return true;
  });
}

int64_t HostDiskMover::count_loadable(std::span<const BlockHash> chain,
                                    std::span<const int32_t> tokens) const {
  return worker_.count_loadable(chain, tokens);
}

int64_t HostDiskMover::clear() {
  worker_.clear();
  return 0;
}

int64_t HostDiskMover::blocks_to_load(std::span<const BlockHash> chain,
                                    std::span<const int32_t> tokens) {
  const int64_t n = count_loadable(chain, tokens);
  if (n == 0) return 0;
  return worth_loading(n, cache_.block_tokens()) ? n : 0;
}

bool HostDiskMover::worth_loading(int64_t n_blocks, int64_t block_tokens) {
  if (cost_.load_wins(n_blocks * pool_.block_bytes(), n_blocks * block_tokens)) return true;
  ++n_loads_declined_;
  return false;
}

int64_t HostDiskMover::start_loads(uint64_t owner, std::span<const BlockId> cached_prefix,
                                 std::span<const BlockHash> chain,
                                 std::span<const int32_t> tokens,
                                 const BlockHash& parent_of_first, int64_t reserve) {
  if (chain.empty() || !cache_.can_allocate(1 + reserve)) return 0;
  Owner& held = owners_[owner];
  for (BlockId block : cached_prefix) {
    cache_.acquire(block);
    held.held.push_back(block);
  }
  const size_t per_block = tokens.size() / chain.size();
  int64_t n = 0;
  for (const BlockHash& hash : chain) {
    if (!cache_.can_allocate(1 + reserve)) break;
    const std::optional<BlockId> block = cache_.allocate();  // private, ref 1: ours
    STRATA_CHECK(block.has_value());
    const uint64_t tag = next_tag_++;
    const auto block_tokens = tokens.subspan(static_cast<size_t>(n) * per_block, per_block);
    const BlockHash& parent = n == 0 ? parent_of_first : chain[static_cast<size_t>(n) - 1];
    moves_.emplace(tag, Move{.kind = MoveKind::kLoad, .block = *block, .hash = hash,
                             .parent = parent,
                             .tokens = {block_tokens.begin(), block_tokens.end()},
                             .owner = owner});
    worker_.load(hash, pool_.data(*block), tag);
    ++n;
  }
  held.n_pending += n;
  if (n > 0) {
    ++n_loads_started_;
    held.n_started = n;
    held.started = std::chrono::steady_clock::now();
  }
  return n;
}

bool HostDiskMover::is_loading(uint64_t owner) const {
  auto it = owners_.find(owner);
  return it != owners_.end() && it->second.n_pending > 0;
}

bool HostDiskMover::has_loaded(uint64_t owner) const { return owners_.contains(owner); }

void HostDiskMover::release_owner(uint64_t owner) {
  auto it = owners_.find(owner);
  if (it == owners_.end()) return;
  cache_.release_table(it->second.held);
  owners_.erase(it);
}

int64_t HostDiskMover::poll() {
  const std::vector<TierCompletion> completions = worker_.take_completions();
  for (const TierCompletion& done : completions) finish(done);
  if (!completions.empty()) finish_flushes();
  return static_cast<int64_t>(completions.size());
}

void HostDiskMover::drain() {
  while (!moves_.empty()) {
    worker_.wait_idle();
    poll();
  }
}

void HostDiskMover::finish(const TierCompletion& done) {
  auto it = moves_.find(done.tag);
  STRATA_CHECK(it != moves_.end(), "a completion for no move (tag ", done.tag, ")");
  Move move = std::move(it->second);
  moves_.erase(it);
  if (move.kind != MoveKind::kLoad) {
    if (move.kind == MoveKind::kDemotion) crash_point("tier.demotion_done");
    persisting_.erase(move.hash);
    cache_.unpin(move.block);  // evictable once idle: a copy is on disk (or the write failed)
    return;
  }
  auto owner = owners_.find(move.owner);
  if (owner != owners_.end() && --owner->second.n_pending == 0) {
    // The round is complete: its bytes over its time, queueing included.
    const std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - owner->second.started;
    cost_.observe_load(owner->second.n_started * pool_.block_bytes(), took.count());
  }
  if (done.event != TierEvent::kLoaded) {
    cache_.release(move.block);  // private: back to the pool
    return;
  }
  ++n_blocks_loaded_;
  // Our reference moves to the block publish() keeps (another request may
  // have computed the same block meanwhile).
  const BlockId kept = cache_.publish(move.hash, move.block, move.tokens, move.parent);
  crash_point("tier.load_published");
  if (owner != owners_.end()) {
    owner->second.held.push_back(kept);
  } else {
    cache_.release(kept);
  }
}

void HostDiskMover::add_references(std::vector<int32_t>& refs) const {
  for (const auto& [tag, move] : moves_) {
    if (move.kind == MoveKind::kLoad) ++refs[static_cast<size_t>(move.block)];  // writes pin
  }
  for (const auto& [id, owner] : owners_) {
    for (BlockId block : owner.held) ++refs[static_cast<size_t>(block)];
  }
}

}  // namespace strata
