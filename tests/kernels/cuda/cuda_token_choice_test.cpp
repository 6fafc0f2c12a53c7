// cuda_choose_tokens against the CPU reference (kernels/sampling/token_chooser.h)
// on the same rows: greedy, sampled with each truncation, log-probabilities,
// penalties and non-finite logits. A sampled row's uniform is the first
// uniform01() of its seed's generator, as the engine's Sampler would draw it,
// so both draw at the same point. Each test skips without a CUDA device.
#include "kernels/cuda/cuda_token_choice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/device_buffer.h"
#include "kernels/sampling/candidate_selection.h"
#include "kernels/sampling/logit_penalizer.h"
#include "kernels/sampling/sampling_params.h"
#include "kernels/sampling/token_chooser.h"
#include "kernels/sampling/xoshiro256.h"
#include "tests/kernels/cuda/cuda_test_support.h"

namespace strata {
namespace {

using testing::cuda_available;
using testing::random_floats;
using testing::to_device;
using testing::to_host;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kLogprobTolerance = 1e-5f;
constexpr int kDraws = 200;  // seeds per sampled configuration
const std::vector<int64_t> kVocabSizes = {1, 7, 1000, 32000, 128256};

// One sequence's choice: which row, how, and the tokens its penalties see.
struct Choice {
  int32_t row = 0;
  SamplingParams params = {};
  std::vector<int32_t> prompt = {};
  std::vector<int32_t> generated = {};
  bool with_logprobs = false;
};

// Logits rows [n_rows][n_vocab] and the choices made from them.
struct Batch {
  int64_t n_vocab = 0;
  std::vector<float> logits = {};
  std::vector<Choice> choices = {};

  std::span<const float> row(int32_t r) const {
    return std::span<const float>(logits).subspan(static_cast<size_t>(r * n_vocab),
                                                  static_cast<size_t>(n_vocab));
  }
};

// What the GPU returned, and the logits it left (penalized in place).
struct GpuResult {
  std::vector<CudaTokenChoice> choices = {};
  std::vector<float> logits = {};
};

bool has_penalties(const SamplingParams& p) {
  return p.repetition_penalty != 1.0f || p.frequency_penalty != 0.0f ||
         p.presence_penalty != 0.0f;
}

bool is_greedy(const SamplingParams& p) {
  return p.temperature < SamplingParams::kGreedyTemperature;
}

// The draw of a sampled row: the first uniform of the generator the engine's
// Sampler seeds with the same seed.
double first_uniform(uint64_t seed) { return Xoshiro256(seed).uniform01(); }

// A sequence's penalty entries as the engine builds them: each distinct id of
// its prompt and generated tokens, with its count among the generated ones.
std::vector<CudaPenaltyToken> penalty_tokens(const Choice& choice) {
  std::map<int32_t, int32_t> n_generated;
  for (int32_t id : choice.prompt) n_generated.try_emplace(id, 0);
  for (int32_t id : choice.generated) ++n_generated[id];
  std::vector<CudaPenaltyToken> tokens;
  for (const auto& [id, count] : n_generated) {
    tokens.push_back({.id = id, .repeated = 1, .n_generated = count});
  }
  return tokens;
}

GpuResult choose_on_gpu(const Batch& batch) {
  std::vector<CudaChoiceParams> params;
  std::vector<CudaPenaltyToken> penalties;
  for (const Choice& c : batch.choices) {
    const auto tokens = penalty_tokens(c);
    params.push_back({.row = c.row,
                      .sampling = c.params,
                      .penalties_begin = static_cast<int32_t>(penalties.size()),
                      .n_penalties = static_cast<int32_t>(tokens.size()),
                      .n_logprobs = c.with_logprobs ? c.params.n_logprobs : -1,
                      .uniform = first_uniform(c.params.seed)});
    penalties.insert(penalties.end(), tokens.begin(), tokens.end());
  }
  const size_t n = params.size();
  DeviceBuffer logits = to_device(batch.logits);
  DeviceBuffer device_params = to_device(params);
  DeviceBuffer device_penalties = penalties.empty() ? DeviceBuffer() : to_device(penalties);
  DeviceBuffer out(n * sizeof(CudaTokenChoice));
  cuda_choose_tokens(logits.as<float>(), batch.n_vocab, device_params.as<CudaChoiceParams>(),
                     static_cast<int64_t>(n), device_penalties.as<CudaPenaltyToken>(),
                     out.as<CudaTokenChoice>(), nullptr);
  const auto bytes = to_host<std::byte>(out, n * sizeof(CudaTokenChoice));
  GpuResult result;
  result.choices.resize(n);
  std::memcpy(result.choices.data(), bytes.data(), bytes.size());
  result.logits = to_host<float>(logits, batch.logits.size());
  return result;
}

SampledToken choose_on_cpu(const Batch& batch, const Choice& c) {
  const std::span<const float> row = batch.row(c.row);
  TokenChoice choice{.params = c.params,
                     .with_logprobs = c.with_logprobs,
                     .uniform = is_greedy(c.params) ? 0.0 : first_uniform(c.params.seed),
                     .penalties = {}};
  LogitPenalizer({.repetition_penalty = c.params.repetition_penalty,
                  .frequency_penalty = c.params.frequency_penalty,
                  .presence_penalty = c.params.presence_penalty})
      .list(c.prompt, c.generated, row.size(), choice.penalties);
  return TokenChooser().choose(row, choice);
}

std::string describe(const Choice& c) {
  const SamplingParams& p = c.params;
  std::ostringstream s;
  s << "row " << c.row << " temperature " << p.temperature << " top_k " << p.top_k << " top_p "
    << p.top_p << " min_p " << p.min_p << " penalties " << p.repetition_penalty << "/"
    << p.frequency_penalty << "/" << p.presence_penalty << " seed " << p.seed << " logprobs "
    << (c.with_logprobs ? p.n_logprobs : -1);
  return s.str();
}

// Why a sampled row's two ids may differ: the CPU's own candidates, draw
// threshold and cumulative weights around both ids, so that a mismatch can
// be judged a rounding tie (threshold within rounding of a boundary) or a bug.
std::string explain_draw(const Batch& batch, const Choice& c, int32_t cpu_id, int32_t gpu_id) {
  const SamplingParams& p = c.params;
  if (is_greedy(p)) return "greedy: no draw";
  const auto row = batch.row(c.row);
  std::vector<float> scaled(row.begin(), row.end());
  if (has_penalties(p)) {
    LogitPenalizer({.repetition_penalty = p.repetition_penalty,
                    .frequency_penalty = p.frequency_penalty,
                    .presence_penalty = p.presence_penalty})
        .apply(scaled, c.prompt, c.generated);
  }
  if (p.temperature != 1.0f) {
    for (float& v : scaled) v /= p.temperature;
  }
  const float max_scaled = *std::max_element(scaled.begin(), scaled.end());
  std::vector<float> weights(scaled.size());
  double total = 0.0;
  for (size_t i = 0; i < scaled.size(); ++i) {
    weights[i] = std::exp(scaled[i] - max_scaled);
    total += weights[i];
  }
  std::vector<int32_t> candidates;
  select_candidates({.logits = scaled, .weights = weights, .total_weight = total},
                    {.top_k = p.top_k, .top_p = p.top_p, .min_p = p.min_p}, candidates);
  double candidate_total = 0.0;
  for (int32_t id : candidates) candidate_total += weights[static_cast<size_t>(id)];
  const double threshold = first_uniform(p.seed) * candidate_total;

  std::ostringstream s;
  s << std::setprecision(17) << "\n  " << describe(c) << "\n  draw threshold " << threshold
    << " = uniform " << first_uniform(p.seed) << " * candidate weight " << candidate_total
    << " (" << candidates.size() << " candidates, vocabulary weight " << total << ")";
  double cumulative = 0.0;
  for (size_t k = 0; k < candidates.size(); ++k) {
    const int32_t id = candidates[k];
    const double before = cumulative;
    cumulative += weights[static_cast<size_t>(id)];
    if (id == cpu_id || id == gpu_id) {
      s << "\n  " << (id == cpu_id ? "cpu" : "gpu") << " id " << id << ": candidate " << k
        << ", cumulative weight (" << before << ", " << cumulative << "]";
    }
  }
  if (std::find(candidates.begin(), candidates.end(), gpu_id) == candidates.end()) {
    // Not a CPU candidate: where it stands in more-likely order, against top-p's target.
    const float gpu_value = scaled[static_cast<size_t>(gpu_id)];
    double more_likely_weight = 0.0;
    size_t rank = 0;
    for (size_t i = 0; i < scaled.size(); ++i) {
      const bool before = scaled[i] > gpu_value ||
                          (scaled[i] == gpu_value && static_cast<int32_t>(i) <= gpu_id);
      if (!before) continue;
      ++rank;
      more_likely_weight += weights[i];
    }
    s << "\n  gpu id " << gpu_id << " is no CPU candidate: rank " << rank
      << " in more-likely order, weight through it " << more_likely_weight << " (top_p * total "
      << static_cast<double>(p.top_p) * total << "), its weight "
      << weights[static_cast<size_t>(gpu_id)];
  }
  return s.str();
}

void expect_matches_cpu(const Batch& batch, const GpuResult& gpu) {
  for (size_t i = 0; i < batch.choices.size(); ++i) {
    const Choice& c = batch.choices[i];
    const CudaTokenChoice& got = gpu.choices[i];
    ASSERT_EQ(got.status, CudaChoiceStatus::kOk) << "choice " << i << ": " << describe(c);
    const SampledToken expected = choose_on_cpu(batch, c);
    if (got.id != expected.id) {
      ADD_FAILURE() << "choice " << i << " (vocabulary " << batch.n_vocab << "): gpu id "
                    << got.id << ", cpu id " << expected.id
                    << explain_draw(batch, c, expected.id, got.id);
      continue;
    }
    if (!c.with_logprobs) continue;
    EXPECT_NEAR(got.logprob, expected.logprob, kLogprobTolerance) << describe(c);
    ASSERT_EQ(static_cast<size_t>(got.n_top), expected.top.size()) << describe(c);
    for (size_t k = 0; k < expected.top.size(); ++k) {
      EXPECT_EQ(got.top_ids[k], expected.top[k].id) << "top " << k << ": " << describe(c);
      EXPECT_NEAR(got.top_logprobs[k], expected.top[k].logprob, kLogprobTolerance)
          << "top " << k << ": " << describe(c);
    }
  }
}

// Rows penalized on the GPU hold what LogitPenalizer makes of them, bit for
// bit; rows without penalties are left as they were.
void expect_rows_penalized_as_on_cpu(const Batch& batch, const GpuResult& gpu) {
  for (const Choice& c : batch.choices) {
    std::vector<float> expected(batch.row(c.row).begin(), batch.row(c.row).end());
    if (has_penalties(c.params)) {
      LogitPenalizer({.repetition_penalty = c.params.repetition_penalty,
                      .frequency_penalty = c.params.frequency_penalty,
                      .presence_penalty = c.params.presence_penalty})
          .apply(expected, c.prompt, c.generated);
    }
    const float* got = gpu.logits.data() + c.row * batch.n_vocab;
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(std::memcmp(&got[i], &expected[i], sizeof(float)), 0)
          << "row " << c.row << " id " << i << ": gpu " << got[i] << ", cpu " << expected[i];
    }
  }
}

std::vector<int32_t> random_tokens(size_t n, int64_t n_vocab, std::mt19937& rng) {
  std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(n_vocab - 1));
  std::vector<int32_t> tokens(n);
  for (int32_t& t : tokens) t = id(rng);
  return tokens;
}

// The ids of the `n` largest values, so that penalties hit the likely tokens.
std::vector<int32_t> top_ids(std::span<const float> row, size_t n) {
  std::vector<int32_t> ids;
  most_likely_ids(row, n, ids);
  return ids;
}

// Penalties on the row's most likely tokens (so that they change the choice),
// on random ones, and repeated generated tokens for the frequency penalty.
void add_penalty_tokens(Choice& c, std::span<const float> row, std::mt19937& rng) {
  const int64_t n_vocab = static_cast<int64_t>(row.size());
  const auto likely = top_ids(row, 4);
  c.prompt = random_tokens(50, n_vocab, rng);
  c.prompt.insert(c.prompt.end(), likely.begin(), likely.begin() + (likely.size() + 1) / 2);
  c.generated = random_tokens(20, n_vocab, rng);
  for (int32_t id : likely) c.generated.insert(c.generated.end(), 3, id);
}

SamplingParams penalized(SamplingParams p) {
  p.repetition_penalty = 1.3f;
  p.frequency_penalty = 0.4f;
  p.presence_penalty = 0.25f;
  return p;
}

// Logits with values repeated across ids, so that ties decide orders.
std::vector<float> quantized_floats(size_t n, std::mt19937& rng, float scale, float step) {
  auto values = random_floats(n, rng, scale);
  for (float& v : values) v = std::round(v / step) * step;
  return values;
}

TEST(CudaTokenChoiceTest, GreedyMatchesCpuForEveryVocabularySize) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(1);
  for (int64_t n_vocab : kVocabSizes) {
    Batch batch{.n_vocab = n_vocab};
    const int n_rows = 6;
    batch.logits = random_floats(static_cast<size_t>(n_rows * n_vocab), rng, 3.0f);
    const std::vector<int32_t> rows = {4, 0, 5, 2, 1, 3};
    for (int k = 0; k < n_rows; ++k) {
      Choice c{.row = rows[static_cast<size_t>(k)]};
      c.params.temperature = k == 5 ? 0.0f : 5e-6f;  // both below kGreedyTemperature
      c.params.n_logprobs = std::array{0, 5, 20, 1, 20, 3}[static_cast<size_t>(k)];
      c.with_logprobs = k % 3 != 0;
      if (k >= 2) {
        c.params = penalized(c.params);
        add_penalty_tokens(c, batch.row(c.row), rng);
      }
      if (k == 4) c.params.repetition_penalty = 0.8f;  // < 1 makes repeated tokens likelier
      batch.choices.push_back(c);
    }
    const GpuResult gpu = choose_on_gpu(batch);
    SCOPED_TRACE("vocabulary " + std::to_string(n_vocab));
    expect_matches_cpu(batch, gpu);
    expect_rows_penalized_as_on_cpu(batch, gpu);
  }
}

TEST(CudaTokenChoiceTest, GreedyTiesPickTheLowestId) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(2);
  const int64_t n_vocab = 1000;
  Batch batch{.n_vocab = n_vocab};
  batch.logits = random_floats(static_cast<size_t>(4 * n_vocab), rng, 1.0f);
  const auto set = [&](int32_t row, int32_t id, float value) {
    batch.logits[static_cast<size_t>(row * n_vocab + id)] = value;
  };
  // Row 0: three equal maxima.
  for (int32_t id : {900, 17, 402}) set(0, id, 7.0f);
  // Row 1: the presence penalty brings id 10 down onto id 17's value.
  set(1, 10, 8.0f);
  set(1, 17, 7.0f);
  // Row 2: -0 and +0 are equal: the lower id wins whichever sign it has.
  for (int32_t id = 0; id < n_vocab; ++id) set(2, id, -1.0f);
  set(2, 20, -0.0f);
  set(2, 30, 0.0f);
  // Row 3: every logit equal.
  for (int32_t id = 0; id < n_vocab; ++id) set(3, id, 0.5f);

  SamplingParams greedy;
  greedy.temperature = 0.0f;
  SamplingParams presence = greedy;
  presence.presence_penalty = 1.0f;
  batch.choices = {{.row = 2, .params = greedy},
                   {.row = 0, .params = greedy},
                   {.row = 1, .params = presence, .generated = {10}},
                   {.row = 3, .params = greedy}};
  const GpuResult gpu = choose_on_gpu(batch);
  expect_matches_cpu(batch, gpu);
  EXPECT_EQ(gpu.choices[0].id, 20);
  EXPECT_EQ(gpu.choices[1].id, 17);
  EXPECT_EQ(gpu.choices[2].id, 10);
  EXPECT_EQ(gpu.choices[3].id, 0);
}

TEST(CudaTokenChoiceTest, LogprobsMatchCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(3);
  for (int64_t n_vocab : kVocabSizes) {
    for (bool ties : {false, true}) {
      Batch batch{.n_vocab = n_vocab};
      const int n_rows = 8;
      batch.logits = ties ? quantized_floats(static_cast<size_t>(n_rows * n_vocab), rng, 3.0f, 0.5f)
                          : random_floats(static_cast<size_t>(n_rows * n_vocab), rng, 3.0f);
      for (int k = 0; k < n_rows; ++k) {
        Choice c{.row = n_rows - 1 - k, .with_logprobs = true};
        c.params.n_logprobs = std::array{0, 5, 20}[static_cast<size_t>(k % 3)];
        c.params.seed = static_cast<uint64_t>(k + 1);
        c.params.temperature = k < 4 ? 0.0f : 0.8f;
        if (k >= 4) c.params.top_p = 0.9f;
        if (k % 2 == 1) {  // the chosen token is then often a penalized one
          c.params = penalized(c.params);
          c.params.repetition_penalty = 1.05f;
          c.params.frequency_penalty = 0.01f;
          add_penalty_tokens(c, batch.row(c.row), rng);
        }
        batch.choices.push_back(c);
      }
      SCOPED_TRACE("vocabulary " + std::to_string(n_vocab) + (ties ? " with ties" : ""));
      const GpuResult gpu = choose_on_gpu(batch);
      expect_matches_cpu(batch, gpu);
      expect_rows_penalized_as_on_cpu(batch, gpu);
    }
  }
}

// How a distribution's rows are made.
enum class Shape {
  kNormal,  // logits ~ N(0, 3): the usual
  kPeaked,  // a few tokens far above the rest: small nuclei
  kFlat,    // logits ~ N(0, 0.1): top-p keeps tens of thousands of tokens
};

std::vector<float> make_row(int64_t n_vocab, Shape shape, std::mt19937& rng) {
  auto row = random_floats(static_cast<size_t>(n_vocab), rng, shape == Shape::kFlat ? 0.1f : 3.0f);
  if (shape == Shape::kPeaked) {
    for (int32_t id : random_tokens(3, n_vocab, rng)) row[static_cast<size_t>(id)] += 12.0f;
  }
  return row;
}

struct SampledCase {
  const char* name;
  Shape shape;
  SamplingParams params;
  bool penalties = false;
};

std::vector<SampledCase> sampled_cases() {
  const auto with = [](auto set) {
    SamplingParams p;
    set(p);
    return p;
  };
  return {
      {"all filters off", Shape::kNormal, with([](SamplingParams&) {})},
      {"temperature 0.7", Shape::kNormal, with([](SamplingParams& p) { p.temperature = 0.7f; })},
      {"temperature 1.3", Shape::kNormal, with([](SamplingParams& p) { p.temperature = 1.3f; })},
      {"top-k 1", Shape::kNormal, with([](SamplingParams& p) { p.top_k = 1; })},
      {"top-k 40", Shape::kNormal, with([](SamplingParams& p) { p.top_k = 40; })},
      {"top-p 0.9 peaked", Shape::kPeaked, with([](SamplingParams& p) { p.top_p = 0.9f; })},
      {"top-p 0.9 normal", Shape::kNormal, with([](SamplingParams& p) { p.top_p = 0.9f; })},
      {"top-p 0.5 flat", Shape::kFlat, with([](SamplingParams& p) { p.top_p = 0.5f; })},
      {"top-p 0.95 flat", Shape::kFlat, with([](SamplingParams& p) { p.top_p = 0.95f; })},
      {"top-k 50 top-p 0.8", Shape::kNormal, with([](SamplingParams& p) {
         p.top_k = 50;
         p.top_p = 0.8f;
       })},
      {"top-k 1000 top-p 0.7 flat", Shape::kFlat, with([](SamplingParams& p) {
         p.top_k = 1000;
         p.top_p = 0.7f;
       })},
      {"min-p 0.05", Shape::kNormal, with([](SamplingParams& p) { p.min_p = 0.05f; })},
      {"min-p 0.9 flat", Shape::kFlat, with([](SamplingParams& p) { p.min_p = 0.9f; })},
      {"top-k 20 min-p 0.2 temperature 0.7", Shape::kNormal, with([](SamplingParams& p) {
         p.top_k = 20;
         p.min_p = 0.2f;
         p.temperature = 0.7f;
       })},
      {"top-p 0.9 min-p 0.1 temperature 1.3", Shape::kNormal, with([](SamplingParams& p) {
         p.top_p = 0.9f;
         p.min_p = 0.1f;
         p.temperature = 1.3f;
       })},
      {"penalties, all filters off", Shape::kNormal, with([](SamplingParams&) {}), true},
      {"penalties, top-p 0.9 temperature 0.7", Shape::kPeaked,
       with([](SamplingParams& p) {
         p.top_p = 0.9f;
         p.temperature = 0.7f;
       }),
       true},
      {"penalties, top-k 40 min-p 0.05", Shape::kNormal, with([](SamplingParams& p) {
         p.top_k = 40;
         p.min_p = 0.05f;
       }),
       true},
  };
}

// kDraws seeds of one configuration on one vocabulary, in one launch: each
// choice has its own copy of one of 4 distributions (penalties write rows),
// rows taken in reverse order.
TEST(CudaTokenChoiceTest, SampledMatchesCpuOverManySeeds) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(4);
  for (const SampledCase& sampled : sampled_cases()) {
    for (int64_t n_vocab : kVocabSizes) {
      if (n_vocab < 1000 && sampled.shape == Shape::kFlat) continue;
      std::vector<std::vector<float>> distributions;
      for (int d = 0; d < 4; ++d) distributions.push_back(make_row(n_vocab, sampled.shape, rng));
      Batch batch{.n_vocab = n_vocab};
      batch.logits.reserve(static_cast<size_t>(kDraws * n_vocab));
      for (int r = 0; r < kDraws; ++r) {
        const auto& d = distributions[static_cast<size_t>(r % 4)];
        batch.logits.insert(batch.logits.end(), d.begin(), d.end());
      }
      for (int k = 0; k < kDraws; ++k) {
        Choice c{.row = kDraws - 1 - k, .params = sampled.params};
        c.params.seed = static_cast<uint64_t>(1000 * k + 7);
        c.params.n_logprobs = 2;
        c.with_logprobs = k % 10 == 0;
        if (sampled.penalties) {
          c.params = penalized(c.params);
          add_penalty_tokens(c, batch.row(c.row), rng);
        }
        batch.choices.push_back(c);
      }
      SCOPED_TRACE(std::string(sampled.name) + ", vocabulary " + std::to_string(n_vocab));
      const GpuResult gpu = choose_on_gpu(batch);
      expect_matches_cpu(batch, gpu);
      if (sampled.penalties) expect_rows_penalized_as_on_cpu(batch, gpu);
    }
  }
}

// Top-k and top-p walk in more-likely order: among equal values the lower id
// comes first, -0 and +0 included.
TEST(CudaTokenChoiceTest, SampledTiesFollowMoreLikelyOrder) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(5);
  const int64_t n_vocab = 32000;
  Batch batch{.n_vocab = n_vocab};
  const int n_rows = 60;
  batch.logits = quantized_floats(static_cast<size_t>(n_rows * n_vocab), rng, 2.0f, 1.0f);
  for (int32_t id = 0; id < n_vocab; ++id) {  // row 0: the maximum is zero, at two signs
    float& v = batch.logits[static_cast<size_t>(id)];
    v = std::min(v, -1.0f);
  }
  batch.logits[300] = -0.0f;
  batch.logits[200] = 0.0f;
  batch.logits[100] = -0.0f;
  for (int k = 0; k < n_rows; ++k) {
    Choice c{.row = (k * 7) % n_rows};
    c.params.seed = static_cast<uint64_t>(k + 11);
    c.params.top_k = std::array{1, 2, 3, 500, 0}[static_cast<size_t>(k % 5)];
    c.params.top_p = k % 5 == 4 ? 0.3f : k % 5 == 3 ? 0.6f : 1.0f;
    batch.choices.push_back(c);
  }
  const GpuResult gpu = choose_on_gpu(batch);
  expect_matches_cpu(batch, gpu);
  for (size_t k = 0; k < batch.choices.size(); ++k) {
    if (batch.choices[k].row == 0 && batch.choices[k].params.top_k == 1) {
      EXPECT_EQ(gpu.choices[k].id, 100);
    }
  }
}

TEST(CudaTokenChoiceTest, NonFiniteLogits) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const int64_t n_vocab = 16;
  Batch batch{.n_vocab = n_vocab};
  batch.logits.assign(static_cast<size_t>(6 * n_vocab), 1.0f);
  const auto row = [&](int32_t r) {
    return std::span<float>(batch.logits).subspan(static_cast<size_t>(r * n_vocab),
                                                  static_cast<size_t>(n_vocab));
  };
  row(0)[9] = std::numeric_limits<float>::quiet_NaN();
  std::fill_n(row(1).begin(), n_vocab, -kInf);
  row(2)[3] = kInf;
  // Row 3: dividing by 0.5 overflows ids 2 and 4; the CPU takes the first
  // infinite scaled logit (2), not the raw argmax (4).
  row(3)[2] = 2e38f;
  row(3)[4] = 3e38f;
  // Row 4 (and 5): the repetition penalty pushes every logit to -inf; a draw
  // then takes the raw argmax (7), greedy the argmax of all -inf (0).
  std::fill_n(row(4).begin(), n_vocab, -3e38f);
  row(4)[7] = -2e38f;
  std::copy(row(4).begin(), row(4).end(), row(5).begin());

  SamplingParams sampled;
  SamplingParams hot = sampled;
  hot.temperature = 0.5f;
  SamplingParams crushing = sampled;
  crushing.repetition_penalty = 4.0f;
  SamplingParams crushing_greedy = crushing;
  crushing_greedy.temperature = 0.0f;
  std::vector<int32_t> every_id(static_cast<size_t>(n_vocab));
  for (int32_t id = 0; id < n_vocab; ++id) every_id[static_cast<size_t>(id)] = id;
  batch.choices = {{.row = 0, .params = sampled},
                   {.row = 1, .params = sampled},
                   {.row = 2, .params = sampled},
                   {.row = 3, .params = hot, .with_logprobs = true},
                   {.row = 4, .params = crushing, .prompt = every_id, .with_logprobs = true},
                   {.row = 5, .params = crushing_greedy, .prompt = every_id}};
  const GpuResult gpu = choose_on_gpu(batch);
  EXPECT_EQ(gpu.choices[0].status, CudaChoiceStatus::kNanLogit);
  EXPECT_EQ(gpu.choices[1].status, CudaChoiceStatus::kNoFiniteLogit);
  EXPECT_EQ(gpu.choices[2].status, CudaChoiceStatus::kNoFiniteLogit);
  // The CPU reference rejects rows 0 to 2 (a check); the others it chooses from.
  const Batch finite{
      .n_vocab = n_vocab,
      .logits = batch.logits,
      .choices = std::vector<Choice>(batch.choices.begin() + 3, batch.choices.end())};
  const GpuResult finite_gpu{
      .choices = std::vector<CudaTokenChoice>(gpu.choices.begin() + 3, gpu.choices.end()),
      .logits = gpu.logits};
  expect_matches_cpu(finite, finite_gpu);
  EXPECT_EQ(gpu.choices[3].id, 2);
  EXPECT_EQ(gpu.choices[4].id, 7);
  EXPECT_EQ(gpu.choices[5].id, 0);
}

// With uniforms spread evenly over [0, 1), each token is drawn in proportion
// to its probability among the candidates (the CPU's, renormalized), walking
// ids in order (no top-k or top-p) and in more-likely order (top-k, top-p).
TEST(CudaTokenChoiceTest, DrawFrequenciesFollowTheProbabilities) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const std::vector<float> logits = {0.5f, -1.0f, 2.0f, 0.0f, 1.5f, -3.0f, 0.1f, 1.0f, -0.5f, 0.7f};
  const int n_draws = 20000;
  SamplingParams plain;
  SamplingParams top_k = plain;
  top_k.top_k = 6;
  SamplingParams top_p = plain;
  top_p.top_p = 0.8f;
  top_p.temperature = 1.5f;
  SamplingParams min_p = plain;
  min_p.min_p = 0.2f;
  for (const SamplingParams& params : {plain, top_k, top_p, min_p}) {
    // The candidates' probabilities, from the CPU's own selection.
    std::vector<float> scaled = logits;
    for (float& v : scaled) v /= params.temperature;
    const float max_scaled = *std::max_element(scaled.begin(), scaled.end());
    std::vector<float> weights;
    double total = 0.0;
    for (float v : scaled) {
      weights.push_back(std::exp(v - max_scaled));
      total += weights.back();
    }
    std::vector<int32_t> candidates;
    select_candidates({.logits = scaled, .weights = weights, .total_weight = total},
                      {.top_k = params.top_k, .top_p = params.top_p, .min_p = params.min_p},
                      candidates);
    double candidate_total = 0.0;
    for (int32_t id : candidates) candidate_total += weights[static_cast<size_t>(id)];

    std::vector<CudaChoiceParams> choice_params(static_cast<size_t>(n_draws));
    for (int k = 0; k < n_draws; ++k) {
      CudaChoiceParams& p = choice_params[static_cast<size_t>(k)];
      p.sampling = {.temperature = params.temperature, .top_k = params.top_k,
                    .top_p = params.top_p, .min_p = params.min_p};
      p.uniform = (k + 0.5) / n_draws;
    }
    DeviceBuffer device_logits = to_device(logits);  // one row shared: no penalties write it
    DeviceBuffer device_params = to_device(choice_params);
    DeviceBuffer out(n_draws * sizeof(CudaTokenChoice));
    cuda_choose_tokens(device_logits.as<float>(), static_cast<int64_t>(logits.size()),
                       device_params.as<CudaChoiceParams>(), n_draws, nullptr,
                       out.as<CudaTokenChoice>(), nullptr);
    const auto bytes = to_host<std::byte>(out, n_draws * sizeof(CudaTokenChoice));
    std::vector<CudaTokenChoice> choices(static_cast<size_t>(n_draws));
    std::memcpy(choices.data(), bytes.data(), bytes.size());

    std::vector<int> counts(logits.size(), 0);
    for (const CudaTokenChoice& c : choices) {
      ASSERT_EQ(c.status, CudaChoiceStatus::kOk);
      ASSERT_GE(c.id, 0);
      ASSERT_LT(c.id, static_cast<int32_t>(logits.size()));
      ++counts[static_cast<size_t>(c.id)];
    }
    for (size_t id = 0; id < logits.size(); ++id) {
      const bool candidate =
          std::find(candidates.begin(), candidates.end(), static_cast<int32_t>(id)) !=
          candidates.end();
      const double probability = candidate ? weights[id] / candidate_total : 0.0;
      const double expected = probability * n_draws;
      const double sigma = std::sqrt(n_draws * probability * (1.0 - probability));
      EXPECT_LE(std::abs(counts[id] - expected), 4.0 * sigma + 1.0)
          << "id " << id << ": drawn " << counts[id] << " times, expected " << expected
          << " (top_k " << params.top_k << " top_p " << params.top_p << " min_p "
          << params.min_p << ")";
    }
  }
}

}  // namespace
}  // namespace strata
