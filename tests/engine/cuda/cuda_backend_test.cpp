// CudaBackend on tiny random models: against the dense float64 reference
// (tests/engine/cpu/reference_model.h), against the CPU backend, and against
// itself run in other step shapes (chunks, decode, mixed batches). Every test
// skips without a CUDA device.
#include "engine/cuda/cuda_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/cuda/cuda_model_weights.h"
#include "engine/kv_sizing.h"
#include "gpu/cuda_block_copier.h"
#include "gpu/host_registration.h"
#include "tests/engine/cpu/reference_model.h"
#include "tests/engine/cpu/tiny_model.h"
#include "tests/kernels/cuda/cuda_test_support.h"

namespace strata::testing {
namespace {

// A CudaBackend over its own pool, like the CPU tests' Harness.
struct CudaHarness {
  CudaHarness(const TinyModel& model, WeightType kv_dtype, int64_t block_tokens = 8,
              int64_t n_blocks = 64, bool use_graphs = true, bool fuse = true)
      : layout(kv_layout_for(model.config, block_tokens, kv_dtype)),
        blocks(layout.block_bytes(), n_blocks),
        weights(model.weights, fuse),
        backend(weights, model.config, layout, blocks, use_graphs) {}

  std::vector<float> run(const std::vector<BatchSequence>& batch) {
    std::vector<float> logits;
    backend.forward(batch, logits);
    return logits;
  }

  KvLayout layout;
  BlockPool blocks;
  CudaModelWeights weights;
  CudaBackend backend;
};

// max |a - b| / max |b| over logits rows; b holds rows [first_row, ...).
double relative_diff(std::span<const float> a, const std::vector<std::vector<double>>& b,
                     size_t first_row, size_t n_vocab) {
  double worst = 0;
  double scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double want = b[first_row + i / n_vocab][i % n_vocab];
    if (std::isnan(a[i])) return INFINITY;
    worst = std::max(worst, std::abs(a[i] - want));
    scale = std::max(scale, std::abs(want));
  }
  return worst / scale;
}

double relative_diff(std::span<const float> a, std::span<const float> b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  double scale = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (std::isnan(a[i])) return INFINITY;
    worst = std::max(worst, static_cast<double>(std::abs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::abs(b[i])));
  }
  return worst / scale;
}

class CudaBackendArchTest
    : public ::testing::TestWithParam<std::tuple<Architecture, bool /*tied*/>> {
 protected:
  void SetUp() override {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  }
  TinyModelOptions options() const {
    return {.arch = std::get<0>(GetParam()), .tied = std::get<1>(GetParam()),
            .rope_freqs = std::get<0>(GetParam()) == Architecture::kLlama, .seed = 5};
  }
};

// A prefill of 29 tokens (the cuBLAS path) in a shuffled block table, then
// 12 decode steps (the matrix-vector path), against the reference.
TEST_P(CudaBackendArchTest, PrefillAndDecodeMatchReference) {
  TinyModel model(options());
  CudaHarness h(model, WeightType::kF32);
  allocate_blocks(h.blocks, 5);  // so that the sequence's ids do not start at 0
  TestSequence seq{.tokens = random_tokens(41, model.config.n_vocab, 9),
                   .block_table = allocate_blocks(h.blocks, 6, /*shuffle_seed=*/3)};
  const auto want = ReferenceModel(model.file).forward(seq.tokens);
  const size_t n_vocab = static_cast<size_t>(model.config.n_vocab);
  const std::vector<float> prefill = h.run({seq.next(29, /*all_logits=*/true)});
  ASSERT_EQ(prefill.size(), 29 * n_vocab);
  EXPECT_LE(relative_diff(prefill, want, 0, n_vocab), 1e-3);
  for (size_t i = 29; i < seq.tokens.size(); ++i) {
    const std::vector<float> row = h.run({seq.next(1, false)});
    EXPECT_LE(relative_diff(row, want, i, n_vocab), 1e-4) << "token " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Architectures, CudaBackendArchTest,
                         ::testing::Combine(::testing::Values(Architecture::kLlama,
                                                              Architecture::kQwen2,
                                                              Architecture::kQwen3),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<CudaBackendArchTest::ParamType>& info) {
                           return std::string(architecture_name(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_tied" : "_untied");
                         });

// A batch of sequences in different states (fresh prefill, a continued
// prefill starting mid-block, decodes) gives each the logits it gets alone.
TEST(CudaBackendTest, MixedBatchMatchesEachSequenceAlone) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  TinyModel model({.arch = Architecture::kQwen2, .seed = 12});
  const int64_t n_vocab = model.config.n_vocab;
  struct Plan {
    int64_t n_before;
    int64_t n_step;
    bool all_logits;
  };
  const std::vector<Plan> plans = {
      {0, 13, true}, {9, 7, false}, {20, 1, false}, {16, 1, true}, {3, 17, true}};
  auto make = [&](CudaHarness& h) {
    std::vector<TestSequence> seqs;
    for (size_t i = 0; i < plans.size(); ++i) {
      seqs.push_back(
          {.tokens = random_tokens(plans[i].n_before + plans[i].n_step, n_vocab, 100 + i),
           .block_table = allocate_blocks(h.blocks, 3, 50 + i)});
    }
    for (size_t i = 0; i < plans.size(); ++i) {
      if (plans[i].n_before > 0) h.run({seqs[i].next(plans[i].n_before, false)});
    }
    return seqs;
  };
  CudaHarness batched(model, WeightType::kF16);
  std::vector<TestSequence> a = make(batched);
  std::vector<BatchSequence> batch;
  for (size_t i = 0; i < plans.size(); ++i) {
    batch.push_back(a[i].next(plans[i].n_step, plans[i].all_logits));
  }
  const std::vector<float> together = batched.run(batch);

  CudaHarness alone(model, WeightType::kF16);
  std::vector<TestSequence> b = make(alone);
  std::vector<float> separately;
  for (size_t i = 0; i < plans.size(); ++i) {
    std::vector<float> part = alone.run({b[i].next(plans[i].n_step, plans[i].all_logits)});
    separately.insert(separately.end(), part.begin(), part.end());
  }
  ASSERT_EQ(together.size(), static_cast<size_t>((13 + 1 + 1 + 1 + 17) * n_vocab));
  // Batched, a sequence's rows may take the cuBLAS path where alone they took
  // the matrix-vector kernel: equal up to f16 GEMM rounding.
  EXPECT_LE(relative_diff(together, separately), 2e-3);
}

// A long prefill in chunks after a cached prefix (many attention tiles).
TEST(CudaBackendTest, LongChunkedPrefillMatchesReference) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  TinyModel model({.arch = Architecture::kQwen2, .seed = 30});
  CudaHarness h(model, WeightType::kF32, /*block_tokens=*/16);
  TestSequence seq{.tokens = random_tokens(300, model.config.n_vocab, 31),
                   .block_table = allocate_blocks(h.blocks, 19, 32)};
  h.run({seq.next(21, false)});
  std::vector<float> logits = h.run({seq.next(279, true)});
  const auto want = ReferenceModel(model.file).forward(seq.tokens);
  EXPECT_LE(relative_diff(logits, want, 21, static_cast<size_t>(model.config.n_vocab)), 1e-3);
}

// Every weight type the kernels read, on both matmul paths, against the
// reference's dequantized float64 weights: a prefill through cuBLAS, and the
// same tokens one step at a time through the decode kernels — tensor cores
// from the blocks (activations rounded to f16), for Q4_K and Q6_K integer
// dot products with activations quantized to 8 bits as the CPU does, or for
// BF16 the f32 matrix-vector kernel, as close as F32 weights.
TEST(CudaBackendTest, EveryWeightTypeMatchesReference) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  for (WeightType type : {WeightType::kF16, WeightType::kBF16, WeightType::kQ8_0,
                          WeightType::kQ4_0, WeightType::kQ4_K, WeightType::kQ5_K,
                          WeightType::kQ6_K}) {
    TinyModel model(
        {.arch = Architecture::kLlama, .type = type, .seed = 4, .n_embd = 256, .n_ffn = 512});
    CudaHarness h(model, WeightType::kF32);
    const std::vector<int32_t> tokens = random_tokens(20, model.config.n_vocab, 5);
    const auto want = ReferenceModel(model.file).forward(tokens);
    const size_t n_vocab = static_cast<size_t>(model.config.n_vocab);
    TestSequence prefill{.tokens = tokens, .block_table = allocate_blocks(h.blocks, 3)};
    // Tensor-core inputs are rounded to f16, or to bf16 (8-bit mantissa) for BF16 weights.
    const double prefill_tolerance = type == WeightType::kBF16 ? 2e-2 : 5e-3;
    EXPECT_LE(relative_diff(h.run({prefill.next(20, true)}), want, 0, n_vocab), prefill_tolerance)
        << weight_type_name(type);
    TestSequence decode{.tokens = tokens, .block_table = allocate_blocks(h.blocks, 3)};
    // Q4_K's and Q6_K's 8-bit activations: the CPU backend's own decode of
    // this model is 0.051 and 0.041 off (DecodeAgreesWithCpuBackend holds
    // CUDA to the CPU).
    const bool integer = type == WeightType::kQ4_K || type == WeightType::kQ6_K;
    const double decode_tolerance = type == WeightType::kBF16 ? 1e-4 : integer ? 8e-2 : 5e-3;
    for (size_t i = 0; i < tokens.size(); ++i) {
      EXPECT_LE(relative_diff(h.run({decode.next(1, false)}), want, i, n_vocab), decode_tolerance)
          << weight_type_name(type) << " token " << i;
    }
  }
}

// Decode on CUDA and on the CPU from the same prompt: on F16 weights (the
// GPU rounds activations to f16 for its tensor cores: ~1e-3), and on Q4_K
// and Q6_K, where both quantize activations to 8-bit Q8_K blocks and form
// the same integer sums (only f32 roundings differ, which can move an
// activation's 8-bit rounding). Llama for those: Qwen3's attention output
// rows (128) are not whole K-quant blocks, so the file holds them as Q8_0,
// whose activations the GPU rounds to f16 and the CPU quantizes to 8 bits
// (~2e-2 apart).
TEST(CudaBackendTest, DecodeAgreesWithCpuBackend) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  for (const auto& [arch, type] : {std::pair{Architecture::kQwen3, WeightType::kF16},
                                   std::pair{Architecture::kLlama, WeightType::kQ4_K},
                                   std::pair{Architecture::kLlama, WeightType::kQ6_K}}) {
    TinyModel model({.arch = arch, .type = type, .seed = 7, .n_embd = 256, .n_ffn = 256});
    Harness cpu(model, WeightType::kF16);
    CudaHarness gpu(model, WeightType::kF16);
    const std::vector<int32_t> tokens = random_tokens(40, model.config.n_vocab, 8);
    TestSequence a{.tokens = tokens, .block_table = allocate_blocks(cpu.blocks, 5)};
    TestSequence b{.tokens = tokens, .block_table = allocate_blocks(gpu.blocks, 5, 2)};
    for (int64_t n : {1, 1, 1, 1}) {
      std::vector<float> want;
      const std::vector<BatchSequence> batch = {a.next(n, false)};
      cpu.backend.forward(batch, want);
      EXPECT_LE(relative_diff(gpu.run({b.next(n, false)}), want), 3e-3) << weight_type_name(type);
    }
  }
}

// Q, K, V (and gate, up) uploaded as stacked matrices or apart (as for files
// that mix types) give the same logits, on both matmul paths.
TEST(CudaBackendTest, StackedAndSeparateProjectionsAgree) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  for (Architecture arch : {Architecture::kQwen2, Architecture::kQwen3}) {
    TinyModel model({.arch = arch, .type = WeightType::kQ8_0, .seed = 9, .n_embd = 256,
                     .n_ffn = 256});
    CudaHarness stacked(model, WeightType::kF32, 8, 64, true, /*fuse=*/true);
    CudaHarness apart(model, WeightType::kF32, 8, 64, true, /*fuse=*/false);
    ASSERT_TRUE(stacked.weights.layers()[0].qkv_fused());
    ASSERT_FALSE(apart.weights.layers()[0].qkv_fused());
    const std::vector<int32_t> tokens = random_tokens(24, model.config.n_vocab, 3);
    TestSequence a{.tokens = tokens, .block_table = allocate_blocks(stacked.blocks, 3)};
    TestSequence b{.tokens = tokens, .block_table = allocate_blocks(apart.blocks, 3)};
    EXPECT_LE(relative_diff(stacked.run({a.next(20, true)}), apart.run({b.next(20, true)})), 1e-5);
    for (int i = 0; i < 4; ++i) {
      EXPECT_LE(relative_diff(stacked.run({a.next(1, false)}), apart.run({b.next(1, false)})),
                1e-5);
    }
  }
}

// Decode steps replayed from CUDA graphs give exactly the logits of the same
// steps launched one kernel at a time: across context buckets (256, 512),
// batch sizes, and a prefill in between that regrows every buffer (which
// must drop the graphs that baked in the old addresses).
TEST(CudaBackendTest, DecodeGraphsEqualPlainLaunches) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  TinyModel model({.arch = Architecture::kQwen2, .seed = 13});
  const int64_t n_tokens = 600;
  auto run_all = [&](bool graphs) {
    CudaHarness h(model, WeightType::kF16, 16, 128, graphs);
    TestSequence a{.tokens = random_tokens(n_tokens, model.config.n_vocab, 1),
                   .block_table = allocate_blocks(h.blocks, 38, 4)};
    TestSequence b{.tokens = random_tokens(n_tokens, model.config.n_vocab, 2),
                   .block_table = allocate_blocks(h.blocks, 38, 5)};
    std::vector<float> out;
    auto keep = [&](const std::vector<float>& logits) {
      out.insert(out.end(), logits.begin(), logits.end());
    };
    keep(h.run({a.next(3, false)}));
    for (int i = 0; i < 250; ++i) keep(h.run({a.next(1, false)}));  // a: 253 tokens
    keep(h.run({b.next(40, false), a.next(1, false)}));               // regrows the buffers
    for (int i = 0; i < 60; ++i) keep(h.run({a.next(1, false), b.next(1, false)}));
    for (int i = 0; i < 200; ++i) keep(h.run({a.next(1, false)}));  // a crosses 512
    return out;
  };
  const std::vector<float> plain = run_all(false);
  const std::vector<float> graphed = run_all(true);
  ASSERT_EQ(plain.size(), graphed.size());
  EXPECT_EQ(plain, graphed);
}

// A block copied down by the copy stream and up into another slot reads the
// same; completions come back in order, with a wake-up for each batch.
TEST(CudaBackendTest, BlocksRoundTripThroughTheCopyStream) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  TinyModel model({.arch = Architecture::kLlama, .seed = 3});
  CudaHarness h(model, WeightType::kF16);
  TestSequence seq{.tokens = random_tokens(16, model.config.n_vocab, 2),
                   .block_table = allocate_blocks(h.blocks, 2)};
  h.run({seq.next(16, false)});
  const int64_t block_bytes = h.layout.block_bytes();
  CudaBlockCopier copier(h.backend.kv_arena(), CudaBackend::slot_bytes(h.layout),
                         h.blocks.n_total(), block_bytes);
  std::atomic<int> wakeups{0};
  copier.set_listener([&] { ++wakeups; });
  BlockPool host(block_bytes, 2);
  const BlockId slot_a = *host.allocate();
  const BlockId slot_b = *host.allocate();
  HostRegistration pinned(host.memory());
  EXPECT_TRUE(pinned.pinned()) << pinned.error();

  const BlockId first = seq.block_table[0];
  const BlockId other = allocate_blocks(h.blocks, 1)[0];
  using Direction = BlockCopy::Direction;
  const BlockCopy down{.direction = Direction::kToHost, .device_block = first,
                       .host = host.data(slot_a), .tag = 1};
  copier.copy(std::span(&down, 1));
  const std::vector<BlockCopy> up_and_back = {{.direction = Direction::kToDevice,
                                               .device_block = other,
                                               .host = host.data(slot_a),
                                               .tag = 2},
                                              {.direction = Direction::kToHost,
                                               .device_block = other,
                                               .host = host.data(slot_b),
                                               .tag = 3}};
  copier.copy(up_and_back);
  copier.wait_idle();
  EXPECT_EQ(copier.take_completed(), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(wakeups.load(), 2);
  copier.set_listener(nullptr);
  const std::span<const std::byte> a(host.data(slot_a), static_cast<size_t>(block_bytes));
  const std::span<const std::byte> b(host.data(slot_b), static_cast<size_t>(block_bytes));
  EXPECT_GT(std::ranges::count_if(a, [](std::byte x) { return x != std::byte{0}; }),
            block_bytes / 2);  // K/V were written there
  EXPECT_TRUE(std::ranges::equal(a, b));
}

}  // namespace
}  // namespace strata::testing
