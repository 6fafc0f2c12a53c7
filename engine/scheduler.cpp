#include "engine/scheduler.h"

#include <algorithm>
#include <utility>

#include "common/check.h"

namespace strata {

Scheduler::Scheduler(PrefixCache& blocks, int64_t block_tokens, const SchedulerOptions& options)
    : blocks_(blocks), block_tokens_(block_tokens), options_(options) {
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
    for (auto& seq : *list) blocks_.release_table(seq->block_table);
  }
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
  // 3. Admission of waiting sequences, above the watermark.
  while (!waiting_.empty() && budget > 0 && n_running() < options_.max_running &&
         blocks_.can_allocate(1 + watermark_blocks_)) {
    Sequence& seq = *waiting_.front();
    match_prefix(seq);
    const int64_t n = tokens_that_fit(seq, std::min(seq.n_uncomputed(), budget),
                                      /*reserve=*/watermark_blocks_);
    if (n == 0) {  // the match took the idle blocks it counted on
      blocks_.release_table(seq.block_table);
      seq.block_table.clear();
      seq.n_computed = 0;
      break;
    }
    STRATA_CHECK(grow_table(seq, seq.n_computed + n));
    if (!seq.admitted_once) {
      seq.admitted_once = true;
      seq.n_cached_prompt = std::min(seq.n_computed, seq.n_prompt());
      n_cached_prompt_tokens_ += seq.n_cached_prompt;
    }
    seq.status = SequenceStatus::kRunning;
    take(seq, n);
    std::unique_ptr<Sequence> admitted = std::move(waiting_.front());
    waiting_.erase(waiting_.begin());
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
}

std::unique_ptr<Sequence> Scheduler::remove(uint64_t id) {
  for (SeqList* list : {&running_, &waiting_}) {
    auto it = std::find_if(list->begin(), list->end(), [&](const auto& s) { return s->id == id; });
    if (it == list->end()) continue;
    std::unique_ptr<Sequence> seq = std::move(*it);
    list->erase(it);
    release_blocks(*seq);
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

void Scheduler::match_prefix(Sequence& seq) {
  STRATA_CHECK(seq.block_table.empty() && seq.n_computed == 0);
  if (!options_.prefix_caching) return;
  // At least one token is left to run: its logits give the next token.
  const int64_t n_full = (seq.n_tokens() - 1) / block_tokens_;
  if (n_full == 0) return;
  extend_hashes(seq, n_full);
  seq.block_table = blocks_.match(std::span<const BlockHash>(seq.block_hashes).first(n_full),
                                  seq.tokens().first(n_full * block_tokens_));
  seq.n_computed = static_cast<int64_t>(seq.block_table.size()) * block_tokens_;
}

void Scheduler::release_blocks(Sequence& seq) {
  if (options_.prefix_caching) {
    const int64_t n_full = std::min(seq.n_computed / block_tokens_,
                                    static_cast<int64_t>(seq.block_table.size()));
    extend_hashes(seq, n_full);
    for (int64_t i = 0; i < n_full; ++i) {
      seq.block_table[i] = blocks_.publish(seq.block_hashes[i], seq.block_table[i],
                                           seq.tokens().subspan(i * block_tokens_, block_tokens_));
    }
  }
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
  for (BlockId block = 0; block < blocks_.n_total(); ++block) {
    STRATA_CHECK(refs[static_cast<size_t>(block)] == blocks_.ref_count(block), "block ", block,
                 " has ", blocks_.ref_count(block), " references but block tables hold ",
                 refs[static_cast<size_t>(block)]);
  }
}

}  // namespace strata
