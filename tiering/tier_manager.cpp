#include "tiering/tier_manager.h"

#include "common/check.h"

namespace strata {

TierManager::TierManager(PrefixCache& cache, BlockPool& pool, TierWorker& worker)
    : cache_(cache), pool_(pool), worker_(worker) {}

TierManager::~TierManager() {
  owners_.clear();  // nobody is waiting any more: loaded blocks stay cached, unheld
  drain();
}

void TierManager::write_through(BlockId block, const BlockHash& hash, const BlockHash& parent,
                                std::span<const int32_t> tokens) {
  if (persisting_.contains(hash) || worker_.contains(hash)) return;
  cache_.acquire(block);  // the bytes must stay put until written
  const uint64_t tag = next_tag_++;
  moves_.emplace(tag, Move{.block = block, .hash = hash, .tokens = {}, .owner = 0,
                           .is_write = true});
  persisting_.insert(hash);
  worker_.persist(hash, parent, tokens, pool_.data(block), tag);
}

int64_t TierManager::count_loadable(std::span<const BlockHash> chain,
                                    std::span<const int32_t> tokens) const {
  return worker_.count_loadable(chain, tokens);
}

int64_t TierManager::start_loads(uint64_t owner, std::span<const BlockHash> chain,
                                 std::span<const int32_t> tokens, int64_t reserve) {
  if (chain.empty()) return 0;
  const size_t per_block = tokens.size() / chain.size();
  int64_t n = 0;
  for (const BlockHash& hash : chain) {
    if (!cache_.can_allocate(1 + reserve)) break;
    const std::optional<BlockId> block = cache_.allocate();  // private, ref 1: ours
    STRATA_CHECK(block.has_value());
    const uint64_t tag = next_tag_++;
    const auto block_tokens = tokens.subspan(static_cast<size_t>(n) * per_block, per_block);
    moves_.emplace(tag, Move{.block = *block, .hash = hash,
                             .tokens = {block_tokens.begin(), block_tokens.end()},
                             .owner = owner, .is_write = false});
    worker_.load(hash, pool_.data(*block), tag);
    ++n;
  }
  if (n > 0) {
    owners_[owner].n_pending += n;
    ++n_loads_started_;
  }
  return n;
}

bool TierManager::is_loading(uint64_t owner) const {
  auto it = owners_.find(owner);
  return it != owners_.end() && it->second.n_pending > 0;
}

bool TierManager::has_loaded(uint64_t owner) const { return owners_.contains(owner); }

void TierManager::release_owner(uint64_t owner) {
  auto it = owners_.find(owner);
  if (it == owners_.end()) return;
  cache_.release_table(it->second.held);
  owners_.erase(it);
}

void TierManager::poll() {
  for (const TierCompletion& done : worker_.take_completions()) finish(done);
}

void TierManager::drain() {
  while (!moves_.empty()) {
    worker_.wait_idle();
    poll();
  }
}

void TierManager::finish(const TierCompletion& done) {
  auto it = moves_.find(done.tag);
  STRATA_CHECK(it != moves_.end(), "a completion for no move (tag ", done.tag, ")");
  Move move = std::move(it->second);
  moves_.erase(it);
  if (move.is_write) {
    persisting_.erase(move.hash);
    cache_.release(move.block);  // unpinned: evictable once idle, a copy being on disk
    return;
  }
  auto owner = owners_.find(move.owner);
  if (owner != owners_.end()) --owner->second.n_pending;
  if (done.event != TierEvent::kLoaded) {
    cache_.release(move.block);  // private: back to the pool
    return;
  }
  ++n_blocks_loaded_;
  // Our reference moves to the block publish() keeps (another request may
  // have computed the same block meanwhile).
  const BlockId kept = cache_.publish(move.hash, move.block, move.tokens);
  if (owner != owners_.end()) {
    owner->second.held.push_back(kept);
  } else {
    cache_.release(kept);
  }
}

void TierManager::add_references(std::vector<int32_t>& refs) const {
  for (const auto& [tag, move] : moves_) ++refs[static_cast<size_t>(move.block)];
  for (const auto& [id, owner] : owners_) {
    for (BlockId block : owner.held) ++refs[static_cast<size_t>(block)];
  }
}

}  // namespace strata
