#include "engine/cpu/cpu_backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <tuple>
#include <vector>

#include "reference_model.h"
#include "tiny_model.h"

namespace strata::testing {
namespace {

std::vector<float> run(Harness& h, const std::vector<BatchSequence>& batch) {
  std::vector<float> logits;
  h.backend.forward(batch, logits);
  h.blocks.check_integrity();
  return logits;
}

// Largest |a - b| over rows of n_vocab; a holds rows [first_row, ...) of b.
double max_diff(std::span<const float> a, const std::vector<std::vector<double>>& b,
                size_t first_row, size_t n_vocab) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::abs(a[i] - b[first_row + i / n_vocab][i % n_vocab]));
  }
  return worst;
}

double max_diff(std::span<const float> a, std::span<const float> b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    worst = std::max(worst, static_cast<double>(std::abs(a[i] - b[i])));
  }
  return worst;
}

double max_abs(const std::vector<std::vector<double>>& rows) {
  double m = 0;
  for (const auto& row : rows) {
    for (double v : row) m = std::max(m, std::abs(v));
  }
  return m;
}

class CpuBackendArchTest
    : public ::testing::TestWithParam<std::tuple<Architecture, bool /*tied*/>> {
 protected:
  TinyModelOptions options() const {
    return {.arch = std::get<0>(GetParam()), .tied = std::get<1>(GetParam()), .seed = 5};
  }
};

// One prefill of 29 tokens (3 full blocks of 8 and a partial one, in a
// shuffled, non-contiguous block table) against the dense reference.
TEST_P(CpuBackendArchTest, PrefillMatchesReference) {
  TinyModel model(options());
  Harness h(model, WeightType::kF32);
  allocate_blocks(h.blocks, 5);  // so that the sequence's ids do not start at 0
  TestSequence seq{.tokens = random_tokens(29, model.config.n_vocab, 9),
                   .block_table = allocate_blocks(h.blocks, 4, /*shuffle_seed=*/3)};
  std::vector<float> logits = run(h, {seq.next(29, /*all_logits=*/true)});
  ASSERT_EQ(logits.size(), 29u * model.config.n_vocab);

  const auto want = ReferenceModel(model.file).forward(seq.tokens);
  EXPECT_GT(max_abs(want), 0.1);  // logits of a sane size, so the bound below means something
  EXPECT_LE(max_diff(logits, want, 0, model.config.n_vocab), 1e-4);
}

// The same sequence run whole, in chunks that start and end mid-block, and
// token by token, gives the same logits.
TEST_P(CpuBackendArchTest, ChunkedPrefillAndDecodeMatchOneShot) {
  TinyModel model(options());
  const std::vector<int32_t> tokens = random_tokens(30, model.config.n_vocab, 4);
  const size_t n_vocab = static_cast<size_t>(model.config.n_vocab);

  Harness whole(model, WeightType::kF32);
  TestSequence a{.tokens = tokens, .block_table = allocate_blocks(whole.blocks, 4)};
  const std::vector<float> want = run(whole, {a.next(30, true)});

  Harness chunked(model, WeightType::kF32);
  TestSequence b{.tokens = tokens, .block_table = allocate_blocks(chunked.blocks, 4, 8)};
  std::vector<float> got;
  for (int64_t n : {5, 3, 8, 1, 7, 6}) {
    std::vector<float> part = run(chunked, {b.next(n, true)});
    got.insert(got.end(), part.begin(), part.end());
  }
  EXPECT_LE(max_diff(got, want), 1e-5);

  Harness decode(model, WeightType::kF32);
  TestSequence c{.tokens = tokens, .block_table = allocate_blocks(decode.blocks, 4, 9)};
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::vector<float> row = run(decode, {c.next(1, /*all_logits=*/false)});
    ASSERT_EQ(row.size(), n_vocab);
    EXPECT_LE(max_diff(row, std::span<const float>(want).subspan(i * n_vocab, n_vocab)), 1e-5)
        << "token " << i;
  }
}

// Without all_logits only the last token's row comes back.
TEST_P(CpuBackendArchTest, LastLogitsOnly) {
  TinyModel model(options());
  const size_t n_vocab = static_cast<size_t>(model.config.n_vocab);
  const std::vector<int32_t> tokens = random_tokens(11, model.config.n_vocab, 2);
  Harness all(model, WeightType::kF32);
  TestSequence a{.tokens = tokens, .block_table = allocate_blocks(all.blocks, 2)};
  const std::vector<float> every = run(all, {a.next(11, true)});
  Harness last(model, WeightType::kF32);
  TestSequence b{.tokens = tokens, .block_table = allocate_blocks(last.blocks, 2)};
  const std::vector<float> one = run(last, {b.next(11, false)});
  ASSERT_EQ(one.size(), n_vocab);
  EXPECT_LE(max_diff(one, std::span<const float>(every).subspan(10 * n_vocab)), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Architectures, CpuBackendArchTest,
                         ::testing::Combine(::testing::Values(Architecture::kLlama,
                                                              Architecture::kQwen2,
                                                              Architecture::kQwen3),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<CpuBackendArchTest::ParamType>& info) {
                           return std::string(architecture_name(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_tied" : "_untied");
                         });

// A batch of sequences in different states (fresh prefill, a continued
// prefill starting mid-block, decodes) gives each the logits it gets alone.
TEST(CpuBackendTest, MixedBatchMatchesEachSequenceAlone) {
  TinyModel model({.arch = Architecture::kQwen2, .seed = 12});
  const int64_t n_vocab = model.config.n_vocab;
  struct Plan {
    int64_t n_before;  // tokens run in earlier steps
    int64_t n_step;    // tokens in the batched step
    bool all_logits;
  };
  const std::vector<Plan> plans = {
      {0, 13, true}, {9, 7, false}, {20, 1, false}, {16, 1, true}, {3, 17, true}};

  auto make = [&](Harness& h) {
    std::vector<TestSequence> seqs;
    for (size_t i = 0; i < plans.size(); ++i) {
      seqs.push_back(
          {.tokens = random_tokens(plans[i].n_before + plans[i].n_step, n_vocab, 100 + i),
           .block_table = allocate_blocks(h.blocks, 3, 50 + i)});
    }
    for (size_t i = 0; i < plans.size(); ++i) {
      if (plans[i].n_before > 0) run(h, {seqs[i].next(plans[i].n_before, false)});
    }
    return seqs;
  };

  Harness batched(model, WeightType::kF32);
  std::vector<TestSequence> a = make(batched);
  std::vector<BatchSequence> batch;
  for (size_t i = 0; i < plans.size(); ++i)
    batch.push_back(a[i].next(plans[i].n_step, plans[i].all_logits));
  const std::vector<float> together = run(batched, batch);

  Harness alone(model, WeightType::kF32);
  std::vector<TestSequence> b = make(alone);
  std::vector<float> separately;
  for (size_t i = 0; i < plans.size(); ++i) {
    std::vector<float> part = run(alone, {b[i].next(plans[i].n_step, plans[i].all_logits)});
    separately.insert(separately.end(), part.begin(), part.end());
  }
  ASSERT_EQ(together.size(), static_cast<size_t>((13 + 1 + 1 + 1 + 17) * n_vocab));
  EXPECT_LE(max_diff(together, separately), 1e-5);
}

// A prefill longer than one attention task (kAttentionChunkTokens) and many
// query tiles, after a cached prefix.
TEST(CpuBackendTest, LongChunkedPrefillMatchesReference) {
  TinyModel model({.arch = Architecture::kQwen2, .seed = 30});
  Harness h(model, WeightType::kF32, /*block_tokens=*/16);
  TestSequence seq{.tokens = random_tokens(170, model.config.n_vocab, 31),
                   .block_table = allocate_blocks(h.blocks, 11, 32)};
  run(h, {seq.next(21, false)});
  std::vector<float> logits = run(h, {seq.next(149, true)});
  const auto want = ReferenceModel(model.file).forward(seq.tokens);
  EXPECT_LE(max_diff(logits, want, 21, static_cast<size_t>(model.config.n_vocab)), 1e-4);
}

// Llama: interleaved RoPE on the GGUF's permuted Q/K rows is exactly HF's
// rotate_half RoPE on the original rows (the premise of kNormal ordering).
TEST(CpuBackendTest, LlamaMatchesHfOrderReference) {
  TinyModel model({.arch = Architecture::kLlama, .rope_freqs = true, .seed = 21});
  Harness h(model, WeightType::kF32);
  TestSequence seq{.tokens = random_tokens(20, model.config.n_vocab, 22),
                   .block_table = allocate_blocks(h.blocks, 3)};
  std::vector<float> logits = run(h, {seq.next(20, true)});
  const auto hf = ReferenceModel(model.file, LlamaQkOrder::kHf).forward(seq.tokens);
  EXPECT_LE(max_diff(logits, hf, 0, static_cast<size_t>(model.config.n_vocab)), 1e-4);
}

// A second sequence that shares the first two full blocks of another (a
// prefix-cache hit) continues from them and gets the reference logits.
TEST(CpuBackendTest, ContinuesFromSharedPrefixBlocks) {
  TinyModel model({.arch = Architecture::kQwen3, .seed = 3});
  Harness h(model, WeightType::kF32);
  std::vector<int32_t> prefix = random_tokens(16, model.config.n_vocab, 1);
  TestSequence first{.tokens = prefix, .block_table = allocate_blocks(h.blocks, 3)};
  first.tokens.push_back(5);
  run(h, {first.next(17, false)});

  TestSequence second{.tokens = prefix,
                      .block_table = {first.block_table[0], first.block_table[1]}};
  for (int32_t t : random_tokens(10, model.config.n_vocab, 2)) second.tokens.push_back(t);
  for (BlockId id : allocate_blocks(h.blocks, 2)) second.block_table.push_back(id);
  second.n_past = 16;
  std::vector<float> logits = run(h, {second.next(10, true)});

  const auto want = ReferenceModel(model.file).forward(second.tokens);
  EXPECT_LE(max_diff(logits, want, 16, static_cast<size_t>(model.config.n_vocab)), 1e-4);
}

TEST(CpuBackendTest, RopeFrequencyFactorsMatchReference) {
  TinyModel model({.arch = Architecture::kLlama, .rope_freqs = true, .seed = 8});
  ASSERT_TRUE(model.config.has_rope_freqs);
  ASSERT_EQ(model.weights.rope_freqs().size(), 8u);
  Harness h(model, WeightType::kF32, /*block_tokens=*/16);
  TestSequence seq{.tokens = random_tokens(40, model.config.n_vocab, 6),
                   .block_table = allocate_blocks(h.blocks, 3, 2)};
  std::vector<float> logits = run(h, {seq.next(40, true)});
  const auto want = ReferenceModel(model.file).forward(seq.tokens);
  EXPECT_LE(max_diff(logits, want, 0, static_cast<size_t>(model.config.n_vocab)), 1e-4);
}

TEST(CpuBackendTest, F16KvIsCloseToF32Kv) {
  TinyModel model({.arch = Architecture::kQwen2, .seed = 2});
  const std::vector<int32_t> tokens = random_tokens(35, model.config.n_vocab, 3);
  Harness f32(model, WeightType::kF32);
  Harness f16(model, WeightType::kF16);
  EXPECT_EQ(f16.layout.block_bytes() * 2, f32.layout.block_bytes());
  TestSequence a{.tokens = tokens, .block_table = allocate_blocks(f32.blocks, 5)};
  TestSequence b{.tokens = tokens, .block_table = allocate_blocks(f16.blocks, 5)};
  std::vector<float> exact = run(f32, {a.next(20, true)});
  std::vector<float> half = run(f16, {b.next(20, true)});
  for (int i = 0; i < 15; ++i) {  // then decode, reading the stored halves back
    std::vector<float> e = run(f32, {a.next(1, false)});
    std::vector<float> h = run(f16, {b.next(1, false)});
    exact.insert(exact.end(), e.begin(), e.end());
    half.insert(half.end(), h.begin(), h.end());
  }
  const double diff = max_diff(half, exact);
  EXPECT_LE(diff, 5e-3);
  EXPECT_GT(diff, 0.0);  // the f16 path really ran
}

// Quantized weights: the backend's integer dot products against the
// reference's dequantized weights. Activations are quantized to 8 bits, so
// only closeness is expected.
TEST(CpuBackendTest, QuantizedWeightsStayCloseToReference) {
  for (WeightType type : {WeightType::kQ8_0, WeightType::kQ4_K, WeightType::kF16}) {
    // n_embd 256 so that rows split into K-quant super-blocks.
    TinyModel model(
        {.arch = Architecture::kLlama, .type = type, .seed = 4, .n_embd = 256, .n_ffn = 256});
    Harness h(model, WeightType::kF32);
    TestSequence seq{.tokens = random_tokens(12, model.config.n_vocab, 5),
                     .block_table = allocate_blocks(h.blocks, 2)};
    std::vector<float> logits = run(h, {seq.next(12, true)});
    const auto want = ReferenceModel(model.file).forward(seq.tokens);
    EXPECT_LE(max_diff(logits, want, 0, static_cast<size_t>(model.config.n_vocab)),
              0.05 * max_abs(want))
        << weight_type_name(type);
  }
}

TEST(CpuBackendDeathTest, RejectsBadBatches) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TinyModel model({.arch = Architecture::kLlama});
  Harness h(model, WeightType::kF32);
  std::vector<BlockId> table = allocate_blocks(h.blocks, 2);
  std::vector<int32_t> tokens = {1, 2, 3};
  std::vector<float> logits;
  auto forward = [&](std::vector<BatchSequence> batch) { h.backend.forward(batch, logits); };

  std::vector<int32_t> bad_token = {1, 77};
  EXPECT_DEATH(forward({{.tokens = bad_token, .block_table = table}}), "token 77");
  EXPECT_DEATH(forward({{.tokens = tokens, .n_past = 14, .block_table = table}}),
               "block table of 2 blocks");
  EXPECT_DEATH(forward({{.tokens = tokens, .block_table = table},
                        {.tokens = tokens, .n_past = 2, .block_table = table}}),
               "same KV block");
  h.blocks.free(table[1]);
  EXPECT_DEATH(forward({{.tokens = tokens, .n_past = 7, .block_table = table}}), "free block");
}

}  // namespace
}  // namespace strata::testing
