// The Scheduler alone, driven by hand (no model): budget split between decode
// and chunked prefill, priorities, the running cap, preemption and prefix
// reuse, with check_integrity() after every step.
#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "model/tokenizer/tokenizer.h"
#include "tiering/block_pool.h"
#include "tiering/prefix_cache.h"

namespace strata {
namespace {

constexpr int64_t kBlockTokens = 4;

Tokenizer small_tokenizer() {
  Vocab vocab;
  vocab.tokens = {"<unk>", "<s>", "</s>"};
  vocab.types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl};
  for (int i = 0; i < 61; ++i) {
    vocab.tokens.push_back(std::string("\xE2\x96\x81") + static_cast<char>('A' + i));
    vocab.types.push_back(TokenType::kNormal);
  }
  vocab.scores.assign(vocab.tokens.size(), 0.0f);
  vocab.unk = 0;
  vocab.bos = 1;
  vocab.eos = 2;
  return Tokenizer(std::move(vocab));
}

struct Fixture {
  explicit Fixture(int64_t n_blocks, SchedulerOptions options)
      : pool(64, n_blocks), cache(pool, kBlockTokens), scheduler(cache, kBlockTokens, options) {}

  // Adds a sequence with prompt tokens 3, 4, ... (offset by `first`).
  Sequence* add(uint64_t id, int64_t n_prompt, Priority priority = Priority::kInteractive,
                int64_t max_tokens = 100, int32_t first = 3) {
    GenerateRequest request;
    for (int64_t i = 0; i < n_prompt; ++i)
      request.prompt.push_back(first + static_cast<int32_t>(i % 60));
    request.max_tokens = max_tokens;
    request.priority = priority;
    auto seq = std::make_unique<Sequence>(id, id, std::move(request), nullptr, tokenizer);
    Sequence* raw = seq.get();
    scheduler.add(std::move(seq));
    return raw;
  }

  Sequence* add_tokens(uint64_t id, std::vector<int32_t> prompt, int64_t max_tokens = 100) {
    GenerateRequest request;
    request.prompt = std::move(prompt);
    request.max_tokens = max_tokens;
    auto seq = std::make_unique<Sequence>(id, id, std::move(request), nullptr, tokenizer);
    Sequence* raw = seq.get();
    scheduler.add(std::move(seq));
    return raw;
  }

  // One step: schedule, "run", append token 10 wherever a chunk samples.
  std::vector<ScheduledChunk> step() {
    std::vector<ScheduledChunk> batch = scheduler.schedule();
    for (const ScheduledChunk& chunk : batch) {
      const bool samples = chunk.samples();
      scheduler.mark_computed(chunk);
      if (samples) chunk.seq->append(10);
    }
    scheduler.check_integrity();
    return batch;
  }

  Tokenizer tokenizer = small_tokenizer();
  BlockPool pool;
  PrefixCache cache;
  Scheduler scheduler;
};

int64_t tokens_of(const std::vector<ScheduledChunk>& batch, const Sequence* seq) {
  for (const ScheduledChunk& chunk : batch) {
    if (chunk.seq == seq) return chunk.n_tokens;
  }
  return 0;
}

TEST(SchedulerTest, DecodeFirstThenChunkedPrefill) {
  Fixture f(64, {.max_batch_tokens = 8, .max_running = 8, .watermark_blocks = 0});
  Sequence* a = f.add(1, 3);
  EXPECT_EQ(tokens_of(f.step(), a), 3);  // prefill; samples
  EXPECT_TRUE(a->is_decoding());
  Sequence* b = f.add(2, 40);
  int64_t b_steps = 0;
  while (b->n_generated() == 0) {
    std::vector<ScheduledChunk> batch = f.step();
    ASSERT_EQ(batch.size(), 2u);
    EXPECT_EQ(batch[0].seq, a);  // decode first
    EXPECT_EQ(tokens_of(batch, a), 1);
    EXPECT_EQ(tokens_of(batch, b), std::min<int64_t>(7, 40 - 7 * b_steps));
    ++b_steps;
  }
  EXPECT_EQ(b_steps, 6);  // 40 tokens in chunks of 7
  EXPECT_EQ(a->n_generated(), 1 + 6);
  EXPECT_EQ(f.scheduler.n_steps(), 7);
}

TEST(SchedulerTest, InteractiveAdmittedBeforeEarlierBatch) {
  Fixture f(64, {.max_batch_tokens = 64, .max_running = 1, .watermark_blocks = 0});
  Sequence* b1 = f.add(1, 5, Priority::kBatch, 2);
  Sequence* b2 = f.add(2, 5, Priority::kBatch, 2);
  Sequence* i1 = f.add(3, 5, Priority::kInteractive, 2);
  std::vector<ScheduledChunk> batch = f.step();
  ASSERT_EQ(batch.size(), 1u);  // the running cap
  EXPECT_EQ(batch[0].seq, i1);
  f.step();  // i1 samples its 2nd token and would finish: remove it as the engine does
  ASSERT_EQ(i1->n_generated(), 2);
  EXPECT_NE(f.scheduler.remove(3), nullptr);
  batch = f.step();
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].seq, b1);
  EXPECT_EQ(b2->status, SequenceStatus::kWaiting);
}

TEST(SchedulerTest, WatermarkHoldsBackAdmission) {
  Fixture f(10, {.max_batch_tokens = 64, .max_running = 8, .watermark_blocks = 3});
  Sequence* a = f.add(1, 28);  // 7 blocks: leaves exactly the watermark
  Sequence* b = f.add(2, 4);
  std::vector<ScheduledChunk> batch = f.step();
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].seq, a);
  EXPECT_EQ(b->status, SequenceStatus::kWaiting);
}

TEST(SchedulerTest, PreemptsLowestPriorityAndResumesFromCache) {
  // 5 blocks of 4 tokens; two sequences of 8 prompt tokens take 2 blocks each
  // and then need a third each to decode.
  Fixture f(5, {.max_batch_tokens = 64, .max_running = 8, .watermark_blocks = 0});
  Sequence* batch_seq = f.add(1, 8, Priority::kBatch, 100, 3);
  Sequence* interactive = f.add(2, 8, Priority::kInteractive, 100, 20);
  f.step();  // both prefill and sample: 4 blocks used
  EXPECT_EQ(f.pool.n_free(), 1);
  std::vector<ScheduledChunk> batch = f.step();  // the batch sequence gives way
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].seq, interactive);
  EXPECT_EQ(f.scheduler.n_preemptions(), 1);
  EXPECT_EQ(batch_seq->status, SequenceStatus::kWaiting);
  EXPECT_TRUE(batch_seq->block_table.empty());
  EXPECT_EQ(batch_seq->n_generated(), 1);  // kept for the recompute
  EXPECT_EQ(f.cache.n_cached(), 4);        // both sequences' full blocks, published as computed
  batch = f.step();  // no room yet: the cached blocks alone leave nothing to compute into
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch_seq->status, SequenceStatus::kWaiting);
  ASSERT_NE(f.scheduler.remove(2), nullptr);  // the interactive one finishes
  batch = f.step();
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].seq, batch_seq);
  EXPECT_EQ(batch[0].n_past, 8);    // its two full blocks, from the cache
  EXPECT_EQ(batch[0].n_tokens, 1);  // the token sampled before preemption
  EXPECT_EQ(batch_seq->n_generated(), 2);
  EXPECT_EQ(batch_seq->n_cached_prompt, 0);  // counted at the first admission only
}

TEST(SchedulerTest, RemoveReleasesEveryBlock) {
  Fixture f(32, {.max_batch_tokens = 16, .max_running = 8, .watermark_blocks = 0,
                 .prefix_caching = false});
  f.add(1, 50);
  f.add(2, 3);
  f.step();
  f.step();
  EXPECT_GT(f.pool.n_used(), 0);
  EXPECT_NE(f.scheduler.remove(1), nullptr);
  EXPECT_NE(f.scheduler.remove(2), nullptr);
  EXPECT_EQ(f.scheduler.remove(2), nullptr);
  f.scheduler.check_integrity();
  EXPECT_EQ(f.pool.n_free(), f.pool.n_total());
  EXPECT_FALSE(f.scheduler.has_work());
}

// `n` tokens first, first + 1, ...
std::vector<int32_t> run_of(int32_t first, int n) {
  std::vector<int32_t> tokens;
  for (int i = 0; i < n; ++i) tokens.push_back(first + i);
  return tokens;
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(SchedulerTest, PublishesFullBlocksAsSoonAsComputed) {
  Fixture f(16, {.max_batch_tokens = 6, .max_running = 8, .watermark_blocks = 0});
  Sequence* a = f.add(1, 10);
  f.step();  // tokens 0..5: block 0 full
  EXPECT_EQ(f.cache.n_cached(), 1);
  EXPECT_TRUE(f.cache.is_cached(a->block_table[0]));
  EXPECT_FALSE(f.cache.is_cached(a->block_table[1]));
  f.step();  // tokens 6..9: block 1 full, block 2 partial (private)
  EXPECT_EQ(f.cache.n_cached(), 2);
  EXPECT_EQ(a->status, SequenceStatus::kRunning);
  EXPECT_EQ(f.scheduler.n_computed_prompt_tokens(), 10);
}

TEST(SchedulerTest, WaitsForAPrefixBlockInFlightButNotForOthers) {
  // A and B share 16 prompt tokens (4 blocks); C shares nothing.
  Fixture f(64, {.max_batch_tokens = 64, .max_running = 8, .watermark_blocks = 0});
  const std::vector<int32_t> shared = run_of(3, 16);
  Sequence* a = f.add_tokens(1, concat(shared, run_of(30, 8)));
  Sequence* b = f.add_tokens(2, concat(shared, run_of(40, 8)));
  Sequence* c = f.add_tokens(3, run_of(50, 4));
  std::vector<ScheduledChunk> batch = f.step();
  // A computes the shared blocks; B would compute them too: it waits. C runs.
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(tokens_of(batch, a), 24);
  EXPECT_EQ(tokens_of(batch, c), 4);
  EXPECT_EQ(b->status, SequenceStatus::kWaiting);
  EXPECT_EQ(f.scheduler.n_prefix_holds(), 1);
  EXPECT_EQ(f.cache.n_cached(), 6 + 1);  // A's 6 full blocks and C's 1, published while running
  batch = f.step();  // published: B is admitted with the 4 shared blocks
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(b->status, SequenceStatus::kRunning);
  EXPECT_EQ(b->n_cached_prompt, 16);
  EXPECT_EQ(batch[2].seq, b);
  EXPECT_EQ(batch[2].n_past, 16);
  EXPECT_EQ(batch[2].n_tokens, 8);
  EXPECT_EQ(b->block_table[0], a->block_table[0]);
  EXPECT_EQ(f.scheduler.n_prefix_holds(), 1);
  EXPECT_EQ(f.scheduler.n_cached_prompt_tokens(), 16);
  EXPECT_EQ(f.scheduler.n_computed_prompt_tokens(), 24 + 4 + 8);
  // One lookup per admission: A 5 misses; C no full block; B 4 hits 1 miss.
  EXPECT_EQ(f.cache.counters().hits, 4);
  EXPECT_EQ(f.cache.counters().misses, 6);
}

TEST(SchedulerTest, HeldUntilItsNextSharedBlockIsPublished) {
  // A and B share 20 tokens (5 blocks). A prefills in chunks of 16 and 8; B,
  // examined beside A's 2nd chunk, matches 4 blocks while the 5th is in flight.
  Fixture f(64, {.max_batch_tokens = 16, .max_running = 8, .watermark_blocks = 0});
  const std::vector<int32_t> shared = run_of(3, 20);
  Sequence* a = f.add_tokens(1, concat(shared, run_of(30, 4)));
  Sequence* b = f.add_tokens(2, concat(shared, run_of(40, 4)));
  f.step();  // A: 0..15; no budget left to look at B
  EXPECT_EQ(f.scheduler.n_prefix_holds(), 0);
  std::vector<ScheduledChunk> batch = f.step();  // A: 16..23, block 4 in flight
  EXPECT_EQ(tokens_of(batch, a), 8);
  EXPECT_EQ(b->status, SequenceStatus::kWaiting);
  EXPECT_EQ(f.scheduler.n_prefix_holds(), 1);
  batch = f.step();  // A decodes; B matches all 5 shared blocks
  EXPECT_EQ(tokens_of(batch, a), 1);
  EXPECT_EQ(b->status, SequenceStatus::kRunning);
  EXPECT_EQ(b->n_cached_prompt, 20);
  EXPECT_EQ(tokens_of(batch, b), 4);
  EXPECT_EQ(f.scheduler.n_prefix_holds(), 1);
  EXPECT_EQ(f.cache.counters().hits, 5);    // B: chain of 5, all hits
  EXPECT_EQ(f.cache.counters().misses, 5);  // A: chain of 5, none cached
}

TEST(SchedulerTest, AdmissionRetriedForRoomCountsOneLookup) {
  // 4 blocks. A's prompt (2 blocks) is cached idle; D runs in the 2 free
  // blocks; B matches A's 2 blocks, but taking them leaves no block to
  // compute into, so B waits (three steps) without touching the counters.
  Fixture f(4, {.max_batch_tokens = 64, .max_running = 8, .watermark_blocks = 0});
  f.add(1, 8, Priority::kInteractive, 1, 3);
  f.step();
  ASSERT_NE(f.scheduler.remove(1), nullptr);  // finished: 2 idle cached blocks
  Sequence* d = f.add(2, 5, Priority::kInteractive, 100, 40);
  f.step();
  EXPECT_EQ(f.cache.n_evictable(), 2);
  EXPECT_EQ(f.cache.n_free(), 0);
  Sequence* b = f.add(3, 12, Priority::kInteractive, 100, 3);  // A's 8 tokens and 4 more
  for (int i = 0; i < 3; ++i) {
    std::vector<ScheduledChunk> batch = f.step();  // D decodes tokens 5, 6, 7 in its 2nd block
    ASSERT_EQ(batch.size(), 1u);
    EXPECT_EQ(b->status, SequenceStatus::kWaiting);
    EXPECT_EQ(f.cache.counters().hits, 0);
    EXPECT_EQ(f.cache.counters().misses, 2);  // A's and D's lookups: 1 block each
    EXPECT_EQ(f.cache.counters().evictions, 0);
  }
  EXPECT_EQ(f.scheduler.n_prefix_holds(), 0);
  ASSERT_NE(f.scheduler.remove(d->id), nullptr);
  std::vector<ScheduledChunk> batch = f.step();
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].seq, b);
  EXPECT_EQ(batch[0].n_past, 8);
  EXPECT_EQ(f.cache.counters().hits, 2);
  EXPECT_EQ(f.cache.counters().misses, 2);
}

}  // namespace
}  // namespace strata
