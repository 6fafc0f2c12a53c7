#include "engine/scheduler.h"

#include <algorithm>
#include <utility>

#include "common/check.h"
#include "common/crash_point.h"

namespace strata {

Scheduler::Scheduler(PrefixCache& blocks, int64_t block_tokens, const SchedulerOptions& options,
                     LowerTiers* tiers)
    : blocks_(blocks), tiers_(tiers), block_tokens_(block_tokens), options_(options) {
  STRATA_CHECK(block_tokens_ > 0 && block_tokens_ == blocks.block_tokens(), "block_tokens ",
               block_tokens_, " vs the cache's ", blocks.block_tokens());
  STRATA_CHECK(options_.max_batch_tokens >= 1, "max_batch_tokens ", options_.max_batch_tokens);
  STRATA_CHECK(options_.max_running >= 1, "max_running ", options_.max_running);
  watermark_blocks_ = options_.watermark_blocks >= 0 ? options_.watermark_blocks
                                                     : blocks.n_total() / 100;
  watermark_blocks_ = std::clamp<int64_t>(watermark_blocks_, 0, blocks.n_total() - 1);
}

Scheduler::~Scheduler() {
  for (SeqList* list : {&running_, &waiting_}) {
    for (auto& seq : *list) {
      blocks_.release_table(seq->block_table);
      if (tiers_) tiers_->release_owner(seq->id);
    }
  }
}

int64_t Scheduler::n_loading() const {
  if (!tiers_) return 0;
  return std::ranges::count_if(waiting_,
                               [&](const auto& seq) { return tiers_->is_loading(seq->id); });
}

void Scheduler::insert_sorted(SeqList& list, std::unique_ptr<Sequence> seq) {
  auto at = std::upper_bound(list.begin(), list.end(), seq,
                             [](const auto& a, const auto& b) { return a->runs_before(*b); });
  list.insert(at, std::move(seq));
}

void Scheduler::add(std::unique_ptr<Sequence> seq) {
  STRATA_CHECK(seq->block_table.empty() && seq->n_computed == 0);
  seq->status = SequenceStatus::kWaiting;
  insert_sorted(waiting_, std::move(seq));
}

std::vector<ScheduledChunk> Scheduler::schedule() {
  const int64_t step = n_steps_;
  std::vector<ScheduledChunk> batch;
  int64_t budget = options_.max_batch_tokens;
  auto take = [&](Sequence& seq, int64_t n) {
    batch.push_back(ScheduledChunk{.seq = &seq, .n_past = seq.n_computed, .n_tokens = n});
    seq.last_scheduled_step = step;
    budget -= n;
  };

  // 1. Decode: one token per decoding sequence, preempting from the back for blocks.
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Sequence& seq = *running_[i];
    if (!seq.is_decoding()) {
      ++i;
      continue;
    }
    while (!grow_table(seq, seq.n_computed + 1) && preempt_after(i)) {}
    if (!grow_table(seq, seq.n_computed + 1)) {
      preempt(i);  // nothing behind it to take from: it waits instead
      continue;
    }
    take(seq, 1);
    ++i;
  }
  // 2. Chunked prefill (or recompute) of running sequences, in priority order.
  for (size_t i = 0; i < running_.size() && budget > 0; ++i) {
    Sequence& seq = *running_[i];
    if (seq.last_scheduled_step == step || seq.is_decoding()) continue;
    const int64_t want = std::min(seq.n_uncomputed(), budget);
    int64_t n = tokens_that_fit(seq, want, /*reserve=*/0);
    while (n == 0 && preempt_after(i)) n = tokens_that_fit(seq, want, 0);
    if (n == 0) continue;
    STRATA_CHECK(grow_table(seq, seq.n_computed + n));
    take(seq, n);
  }
  // 3. Admission of waiting sequences, above the watermark, in priority
  // order; one whose next block is in flight is skipped (see the header).
  size_t next = 0;
  while (next < waiting_.size() && budget > 0 && n_running() < options_.max_running &&
         blocks_.can_allocate(1 + watermark_blocks_)) {
    Sequence& seq = *waiting_[next];
    if (tiers_ && tiers_->is_loading(seq.id)) {
      ++next;
      continue;
    }
    const int64_t n_full = n_matchable_blocks(seq);
    const std::span<const BlockHash> chain =
        std::span<const BlockHash>(seq.block_hashes).first(n_full);
    const std::span<const TokenId> chain_tokens = seq.tokens().first(n_full * block_tokens_);
    const PrefixCache::MatchPeek peek = n_full > 0 ? blocks_.peek(chain, chain_tokens)
                                                   : PrefixCache::MatchPeek{};
    if (peek.n_blocks < n_full && is_in_flight(chain[peek.n_blocks], peek.n_blocks)) {
      ++n_prefix_holds_;
      ++next;
      continue;
    }
    if (peek.n_blocks < n_full && start_loading(seq, chain, peek.n_blocks)) {
      ++next;
      continue;
    }
    // Plan: the matched blocks stop being evictable once referenced.
    const int64_t n_matched_tokens = peek.n_blocks * block_tokens_;
    const int64_t available = std::max<int64_t>(
        0, blocks_.n_free() + blocks_.n_evictable() - peek.n_idle - watermark_blocks_);
    const int64_t n = std::min({seq.n_tokens() - n_matched_tokens, budget,
                                available * block_tokens_});
    if (n <= 0) break;  // no room: admission resumes when blocks free up
    // Commit.
    if (n_full > 0) seq.block_table = blocks_.match(chain, chain_tokens);
    STRATA_CHECK(static_cast<int64_t>(seq.block_table.size()) == peek.n_blocks,
                 "match() disagrees with peek()");
    if (tiers_) tiers_->release_owner(seq.id);  // its table references the loaded blocks now
    seq.n_computed = n_matched_tokens;
    STRATA_CHECK(grow_table(seq, seq.n_computed + n));
    if (!seq.admitted_once) {
      seq.admitted_once = true;
      seq.n_cached_prompt = std::min(seq.n_computed, seq.n_prompt());
      n_cached_prompt_tokens_ += seq.n_cached_prompt;
    }
    seq.status = SequenceStatus::kRunning;
    take(seq, n);
    std::unique_ptr<Sequence> admitted = std::move(waiting_[next]);
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(next));
    insert_sorted(running_, std::move(admitted));
  }
  if (!batch.empty()) ++n_steps_;
  return batch;
}

void Scheduler::mark_computed(const ScheduledChunk& chunk) {
  Sequence& seq = *chunk.seq;
  STRATA_CHECK(seq.status == SequenceStatus::kRunning && seq.n_computed == chunk.n_past,
               "sequence ", seq.id, " changed between schedule and compute");
  seq.n_computed += chunk.n_tokens;
  STRATA_CHECK(seq.n_computed <= seq.n_tokens());
  n_computed_prompt_tokens_ += std::min(seq.n_computed, seq.n_prompt()) -
                               std::min(chunk.n_past, seq.n_prompt());
  // The blocks this chunk completed are matchable from the next admission on.
  publish_blocks(seq, chunk.n_past / block_tokens_, seq.n_computed / block_tokens_);
}

std::unique_ptr<Sequence> Scheduler::remove(uint64_t id) {
  for (SeqList* list : {&running_, &waiting_}) {
    auto it = std::find_if(list->begin(), list->end(), [&](const auto& s) { return s->id == id; });
    if (it == list->end()) continue;
    std::unique_ptr<Sequence> seq = std::move(*it);
    list->erase(it);
    release_blocks(*seq);
    if (tiers_) tiers_->release_owner(seq->id);
    seq->status = SequenceStatus::kFinished;
    return seq;
  }
  return nullptr;
}

std::vector<std::unique_ptr<Sequence>> Scheduler::remove_all() {
  std::vector<std::unique_ptr<Sequence>> all;
  for (SeqList* list : {&waiting_, &running_}) {
    for (auto& seq : *list) {
      release_blocks(*seq);
      if (tiers_) tiers_->release_owner(seq->id);
      seq->status = SequenceStatus::kFinished;
      all.push_back(std::move(seq));
    }
    list->clear();
  }
  return all;
}

int64_t Scheduler::tokens_that_fit(const Sequence& seq, int64_t want, int64_t reserve) const {
  const int64_t available =
      std::max<int64_t>(0, blocks_.n_free() + blocks_.n_evictable() - reserve);
  const int64_t capacity =
      (static_cast<int64_t>(seq.block_table.size()) + available) * block_tokens_ - seq.n_computed;
  return std::max<int64_t>(0, std::min(want, capacity));
}

bool Scheduler::grow_table(Sequence& seq, int64_t n_tokens) {
  const int64_t needed = (n_tokens + block_tokens_ - 1) / block_tokens_ -
                         static_cast<int64_t>(seq.block_table.size());
  if (needed <= 0) return true;
  if (!blocks_.can_allocate(needed)) return false;
  for (int64_t i = 0; i < needed; ++i) {
    std::optional<BlockId> block = blocks_.allocate();
    STRATA_CHECK(block.has_value(), "can_allocate(", needed, ") promised the blocks");
    seq.block_table.push_back(*block);
  }
  return true;
}

bool Scheduler::preempt_after(size_t self) {
  for (size_t i = running_.size(); i-- > self + 1;) {
    if (running_[i]->last_scheduled_step == n_steps_) continue;  // already in this step's batch
    preempt(i);
    return true;
  }
  return false;
}

void Scheduler::preempt(size_t index) {
  std::unique_ptr<Sequence> seq = std::move(running_[index]);
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(index));
  if (tiers_) tiers_->on_preempted(seq->block_table);  // down first: it resumes from there
  release_blocks(*seq);
  seq->status = SequenceStatus::kWaiting;
  ++seq->n_preemptions;
  ++n_preemptions_;
  insert_sorted(waiting_, std::move(seq));
}

void Scheduler::extend_hashes(Sequence& seq, int64_t n_blocks) {
  while (static_cast<int64_t>(seq.block_hashes.size()) < n_blocks) {
    const int64_t i = static_cast<int64_t>(seq.block_hashes.size());
    const BlockHash parent = i == 0 ? BlockHash{} : seq.block_hashes.back();
    seq.block_hashes.push_back(hash_block(parent, options_.model_fingerprint,
                                          seq.tokens().subspan(i * block_tokens_, block_tokens_)));
  }
}

int64_t Scheduler::n_matchable_blocks(Sequence& seq) {
  STRATA_CHECK(seq.block_table.empty() && seq.n_computed == 0);
  if (!options_.prefix_caching) return 0;
  const int64_t n_full = (seq.n_tokens() - 1) / block_tokens_;
  extend_hashes(seq, n_full);
  return n_full;
}

bool Scheduler::start_loading(Sequence& seq, std::span<const BlockHash> chain, int64_t n_cached) {
  // One round of loads per admission: what failed to load is computed.
  if (!tiers_ || tiers_->has_loaded(seq.id)) return false;
  const std::span<const BlockHash> rest = chain.subspan(static_cast<size_t>(n_cached));
  const std::span<const TokenId> rest_tokens =
      seq.tokens().subspan(static_cast<size_t>(n_cached * block_tokens_),
                           rest.size() * static_cast<size_t>(block_tokens_));
  // Only as far as loading beats computing the tokens again (the cost model).
  const int64_t n_below = tiers_->blocks_to_load(rest, rest_tokens);
  if (n_below == 0) return false;
  const BlockHash parent = n_cached == 0 ? BlockHash{} : chain[static_cast<size_t>(n_cached) - 1];
  const std::vector<BlockId> cached_prefix = blocks_.lookup(
      chain.first(static_cast<size_t>(n_cached)),
      seq.tokens().first(static_cast<size_t>(n_cached * block_tokens_)));
  return tiers_->start_loads(seq.id, cached_prefix, rest.first(static_cast<size_t>(n_below)),
                             rest_tokens.first(static_cast<size_t>(n_below * block_tokens_)),
                             parent, /*reserve=*/watermark_blocks_) > 0;
}

bool Scheduler::is_in_flight(const BlockHash& hash, int64_t block) {
  const int64_t end = (block + 1) * block_tokens_;  // the block's tokens end here
  for (const std::unique_ptr<Sequence>& running : running_) {
    Sequence& seq = *running;
    if (seq.n_computed >= end || seq.n_tokens() < end) continue;  // computed, or not full
    extend_hashes(seq, block + 1);
    if (seq.block_hashes[static_cast<size_t>(block)] == hash) return true;
  }
  return false;
}

void Scheduler::publish_blocks(Sequence& seq, int64_t from, int64_t to) {
  if (!options_.prefix_caching || from >= to) return;
  STRATA_CHECK(to * block_tokens_ <= seq.n_computed &&
                   to <= static_cast<int64_t>(seq.block_table.size()),
               "sequence ", seq.id, " publishes blocks it has not computed");
  extend_hashes(seq, to);
  for (int64_t i = from; i < to; ++i) {
    const size_t b = static_cast<size_t>(i);
    // A block another sequence published first is shared instead (publish
    // moves the reference to it); a cached one is left as it is.
    const std::span<const TokenId> tokens = seq.tokens().subspan(i * block_tokens_, block_tokens_);
    seq.block_table[b] = blocks_.publish(seq.block_hashes[b], seq.block_table[b], tokens,
                                         b == 0 ? BlockHash{} : seq.block_hashes[b - 1]);
    if (!tiers_ || !blocks_.is_cached(seq.block_table[b])) continue;
    crash_point("engine.block_published");
    tiers_->on_published(seq.block_table[b]);
  }
}

void Scheduler::release_blocks(Sequence& seq) {
  // Normally all published already by mark_computed; publishing again is a no-op.
  publish_blocks(seq, 0, std::min(seq.n_computed / block_tokens_,
                                  static_cast<int64_t>(seq.block_table.size())));
  blocks_.release_table(seq.block_table);
  seq.block_table.clear();
  seq.n_computed = 0;
}

void Scheduler::check_integrity() const {
  blocks_.check_integrity();
  std::vector<int32_t> refs(static_cast<size_t>(blocks_.n_total()), 0);
  for (size_t i = 0; i < running_.size(); ++i) {
    const Sequence& seq = *running_[i];
    STRATA_CHECK(seq.status == SequenceStatus::kRunning, "running sequence ", seq.id);
    STRATA_CHECK(static_cast<int64_t>(seq.block_table.size()) * block_tokens_ >= seq.n_computed,
                 "sequence ", seq.id, "'s table does not cover its computed tokens");
    STRATA_CHECK(seq.n_computed < seq.n_tokens(), "sequence ", seq.id, " has nothing to run");
    STRATA_CHECK(i == 0 || running_[i - 1]->runs_before(seq), "running list out of order");
    for (BlockId block : seq.block_table) ++refs[static_cast<size_t>(block)];
  }
  for (size_t i = 0; i < waiting_.size(); ++i) {
    const Sequence& seq = *waiting_[i];
    STRATA_CHECK(seq.status == SequenceStatus::kWaiting && seq.block_table.empty() &&
                     seq.n_computed == 0,
                 "waiting sequence ", seq.id, " holds blocks");
    STRATA_CHECK(i == 0 || waiting_[i - 1]->runs_before(seq), "waiting list out of order");
  }
  if (tiers_) tiers_->add_references(refs);
  for (BlockId block = 0; block < blocks_.n_total(); ++block) {
    STRATA_CHECK(refs[static_cast<size_t>(block)] == blocks_.ref_count(block), "block ", block,
                 " has ", blocks_.ref_count(block), " references but block tables hold ",
                 refs[static_cast<size_t>(block)]);
  }
}

}  // namespace strata
