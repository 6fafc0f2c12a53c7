// The Scheduler alone, driven by hand (no model): budget split between decode
// and chunked prefill, priorities, the running cap, preemption and prefix
// reuse, with check_integrity() after every step.
#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "engine/tokenizer/tokenizer.h"
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
    for (int64_t i = 0; i < n_prompt; ++i) request.prompt.push_back(first + static_cast<int32_t>(i % 60));
    request.max_tokens = max_tokens;
    request.priority = priority;
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
  EXPECT_EQ(f.cache.n_cached(), 2);        // its full blocks were published
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

}  // namespace
}  // namespace strata
