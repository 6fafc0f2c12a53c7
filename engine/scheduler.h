// Scheduler: continuous batching over a per-step token budget.
//
// Each step, in this order:
//   1. decode: one token for every running sequence that is decoding, in
//      priority order (interactive, then batch; oldest first);
//   2. chunked prefill: the rest of the budget goes to running sequences
//      still prefilling (or recomputing after preemption), then to waiting
//      sequences, admitted in priority order while the running cap allows and
//      free blocks stay above the watermark. A long prompt is thus split over
//      several steps while running streams still gain a token each step.
// When a running sequence needs a block and none is free, the lowest
// priority, newest running sequence not yet scheduled this step is preempted:
// its computed full blocks are published to the prefix cache, its blocks
// released, and it goes back to waiting to recompute prompt + generated
// tokens (mostly from the cache) when it is admitted again.
//
// Prefix sharing. Every full block is published to the prefix cache as soon
// as its K/V are computed (mark_computed, after the step that completes it),
// not only when its sequence finishes, so that requests arriving together
// with one long system prompt compute it once:
//  - Admission plans with PrefixCache::peek (the longest cached run of the
//    sequence's full blocks, verified by tokens; no side effects), and calls
//    match() only when it admits, so the cache's hit/miss counters count one
//    lookup per admission.
//  - Prefix-aware admission: when a waiting sequence's first unmatched full
//    block is "in flight" — a running sequence will compute a block with the
//    same chained hash and has not yet (it may be in this very step) — the
//    sequence stays waiting (skipped, not blocking those behind it) until
//    that block is published, and is then admitted with the longer match.
//    Computing the block twice would waste the step; waiting costs at most
//    the steps the running sequence needs for it. A sequence whose next
//    block is not in flight is never delayed. The running sequence never
//    waits on a waiting one, so this cannot deadlock; if it is preempted or
//    finishes, the block is no longer in flight.
//
// Lower tiers (tiering/lower_tiers.h: host memory and disk below a GPU's
// VRAM, or disk below the CPU's host memory). Every block published is
// offered to them (write-through), and a waiting sequence whose prompt
// continues below past the cached prefix first has those blocks brought up
// (it stays waiting, skipped like a held one, while the moves run and other
// sequences keep running), then is admitted with the longer match.
//
// Threads: the engine thread only (no lock).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/sequence.h"
#include "tiering/block_hash.h"
#include "tiering/prefix_cache.h"
#include "tiering/lower_tiers.h"

namespace strata {

struct SchedulerOptions {
  int64_t max_batch_tokens = 512;  // tokens per forward pass (decode + prefill), >= 1
  int64_t max_running = 64;        // running sequences at most, >= 1
  // Free blocks admission leaves for running sequences to grow into;
  // negative: 1% of the pool. Clamped below the pool size.
  int64_t watermark_blocks = -1;
  bool prefix_caching = true;  // match prompts against cached blocks on admission
  ModelFingerprint model_fingerprint{};  // names the KV bytes (tiering/block_hash.h)
};

// One sequence's share of a step: tokens [n_past, n_past + n_tokens) of it.
struct ScheduledChunk {
  Sequence* seq = nullptr;
  int64_t n_past = 0;
  int64_t n_tokens = 0;
  // The chunk ends at the sequence's last token: its logits give the next token.
  bool samples() const { return n_past + n_tokens == seq->n_tokens(); }
};

class Scheduler {
 public:
  // `blocks` (and `tiers`, when not null) must outlive the scheduler;
  // block_tokens as in the KvLayout.
  Scheduler(PrefixCache& blocks, int64_t block_tokens, const SchedulerOptions& options,
            LowerTiers* tiers = nullptr);
  ~Scheduler();

  void add(std::unique_ptr<Sequence> seq);  // to waiting

  // Plans the next step and allocates its blocks; empty when nothing can run.
  // Every chunk's block table covers n_past + n_tokens tokens.
  std::vector<ScheduledChunk> schedule();

  // After the forward pass: the chunk's tokens are computed (the engine then
  // samples where chunk.samples()).
  void mark_computed(const ScheduledChunk& chunk);

  // Removes a running or waiting sequence, publishing its computed full
  // blocks and releasing its blocks. nullptr when no such id.
  std::unique_ptr<Sequence> remove(uint64_t id);
  // Removes every sequence (shutdown), waiting first.
  std::vector<std::unique_ptr<Sequence>> remove_all();

  bool has_work() const { return !running_.empty() || !waiting_.empty(); }
  // Waiting sequences whose prefix is being loaded from a lower tier.
  int64_t n_loading() const;
  int64_t n_running() const { return static_cast<int64_t>(running_.size()); }
  int64_t n_waiting() const { return static_cast<int64_t>(waiting_.size()); }
  int64_t n_steps() const { return n_steps_; }  // schedule() calls that planned work
  int64_t n_preemptions() const { return n_preemptions_; }
  int64_t n_cached_prompt_tokens() const { return n_cached_prompt_tokens_; }
  // Prompt positions run through the model (recomputes after preemption too).
  int64_t n_computed_prompt_tokens() const { return n_computed_prompt_tokens_; }
  // Admission passes in which a waiting sequence was held for an in-flight block.
  int64_t n_prefix_holds() const { return n_prefix_holds_; }
  int64_t watermark_blocks() const { return watermark_blocks_; }
  const PrefixCache& blocks() const { return blocks_; }

  // Aborts unless the prefix cache is consistent, every running sequence's
  // table covers its computed tokens, waiting ones hold no blocks, and the
  // blocks' reference counts equal the references held by block tables.
  void check_integrity() const;

 private:
  using SeqList = std::vector<std::unique_ptr<Sequence>>;

  // Tokens of seq (from n_computed, at most `want`) that fit in its table
  // plus the blocks that can be allocated now, keeping `reserve` blocks back.
  int64_t tokens_that_fit(const Sequence& seq, int64_t want, int64_t reserve) const;
  // Two-phase: grows seq's table to cover n_tokens tokens, or changes nothing
  // and returns false.
  bool grow_table(Sequence& seq, int64_t n_tokens);
  // Preempts the last running sequence after position `self` not scheduled
  // in this step; false when there is none.
  bool preempt_after(size_t self);
  void preempt(size_t index);  // running_[index] back to waiting
  // Full blocks of seq that admission may take from the cache (at least one
  // token is left to run: its logits give the next token); extends its hashes.
  int64_t n_matchable_blocks(Sequence& seq);
  // True when a running sequence will compute a full block with hash
  // `hash` at index `block` of its table and has not yet computed it.
  bool is_in_flight(const BlockHash& hash, int64_t block);
  // Starts loading the blocks of seq's chain after the `n_cached` cached ones
  // that a lower tier holds; true when the sequence now waits for them.
  bool start_loading(Sequence& seq, std::span<const BlockHash> chain, int64_t n_cached);
  // Publishes seq's full blocks in [from, to) (computed, in its table).
  void publish_blocks(Sequence& seq, int64_t from, int64_t to);
  // Publishes seq's computed full blocks and releases its table.
  void release_blocks(Sequence& seq);
  void extend_hashes(Sequence& seq, int64_t n_blocks);
  static void insert_sorted(SeqList& list, std::unique_ptr<Sequence> seq);

  PrefixCache& blocks_;
  LowerTiers* const tiers_;
  const int64_t block_tokens_;
  const SchedulerOptions options_;
  int64_t watermark_blocks_ = 0;
  SeqList running_;  // sorted by Sequence::runs_before
  SeqList waiting_;  // sorted by Sequence::runs_before
  int64_t n_steps_ = 0;
  int64_t n_preemptions_ = 0;
  int64_t n_cached_prompt_tokens_ = 0;
  int64_t n_computed_prompt_tokens_ = 0;
  int64_t n_prefix_holds_ = 0;
};

}  // namespace strata
