#include "engine/sampler/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <vector>

#include "kernels/sampling/xoshiro256.h"

namespace strata {
namespace {

// `n` logits uniform in [-scale, scale), reproducible from `seed`.
std::vector<float> random_logits(size_t n, uint64_t seed, double scale = 5.0) {
  Xoshiro256 rng(seed);
  std::vector<float> logits(n);
  for (float& logit : logits) logit = static_cast<float>((rng.uniform01() * 2.0 - 1.0) * scale);
  return logits;
}

int32_t argmax(const std::vector<float>& logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

std::vector<double> softmax(const std::vector<float>& logits, double temperature) {
  const double max_logit = *std::max_element(logits.begin(), logits.end());
  std::vector<double> probs;
  for (float logit : logits) probs.push_back(std::exp((logit - max_logit) / temperature));
  const double total = std::accumulate(probs.begin(), probs.end(), 0.0);
  for (double& p : probs) p /= total;
  return probs;
}

// Draws `n_draws` tokens from fixed logits (no penalties, so draws are independent) and
// counts each id.
std::vector<int> histogram(const SamplingParams& params, const std::vector<float>& logits,
                           int n_draws) {
  Sampler sampler(params);
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < n_draws; ++i) ++counts[sampler.sample(logits, {}, {}).id];
  return counts;
}

// Pearson's chi-square statistic of observed counts against expected probabilities.
double chi_square(const std::vector<int>& counts, const std::vector<double>& probs, int n) {
  double chi2 = 0.0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double expected = probs[i] * n;
    chi2 += (counts[i] - expected) * (counts[i] - expected) / expected;
  }
  return chi2;
}

// Generates `n_tokens` tokens, feeding each back as generated and drawing fresh logits
// per step, as the engine would.
std::vector<int32_t> generate(const SamplingParams& params, size_t vocab, int n_tokens) {
  Sampler sampler(params);
  const std::vector<int32_t> prompt = {1, 2, 3};
  std::vector<int32_t> generated;
  for (int step = 0; step < n_tokens; ++step) {
    const std::vector<float> logits = random_logits(vocab, 1000 + static_cast<uint64_t>(step), 2.0);
    generated.push_back(sampler.sample(logits, prompt, generated).id);
  }
  return generated;
}

TEST(SamplerTest, GreedyPicksTheArgmaxLowestIdOnTies) {
  Sampler sampler({.temperature = 0.0f, .seed = 1});
  const std::vector<float> logits = {0.1f, 2.5f, -1.0f, 2.4f};
  EXPECT_EQ(sampler.sample(logits, {}, {}).id, 1);
  const std::vector<float> tied = {1.0f, 3.0f, 3.0f, 0.0f, 3.0f};
  EXPECT_EQ(sampler.sample(tied, {}, {}).id, 1);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const std::vector<float> big = random_logits(5000, seed);
    EXPECT_EQ(sampler.sample(big, {}, {}).id, argmax(big));
  }
}

TEST(SamplerTest, GreedyIgnoresTruncationAndTinyTemperatures) {
  const std::vector<float> logits = random_logits(1000, 9);
  for (float temperature : {0.0f, 1e-6f}) {
    Sampler sampler({.temperature = temperature, .top_k = 5, .top_p = 0.5f, .min_p = 0.5f});
    EXPECT_EQ(sampler.sample(logits, {}, {}).id, argmax(logits));
  }
}

TEST(SamplerTest, SameSeedSameTokensOtherSeedOtherTokens) {
  const SamplingParams params = {
      .temperature = 0.9f, .top_p = 0.95f, .presence_penalty = 0.3f, .seed = 1234};
  const std::vector<int32_t> first = generate(params, 2000, 200);
  EXPECT_EQ(first, generate(params, 2000, 200));

  SamplingParams other = params;
  other.seed = 1235;
  const std::vector<int32_t> second = generate(other, 2000, 200);
  EXPECT_NE(first, second);
  // Not merely different somewhere: independent draws agree rarely.
  int n_same = 0;
  for (size_t i = 0; i < first.size(); ++i) n_same += first[i] == second[i];
  EXPECT_LT(n_same, 20);
}

TEST(SamplerTest, TemperatureSamplingFollowsTheSoftmax) {
  const std::vector<float> logits = {1.0f, 0.5f, 0.0f, -0.5f, 2.0f, -3.0f, 1.5f, 0.2f};
  constexpr int kDraws = 20000;
  for (float temperature : {1.0f, 0.7f, 2.0f}) {
    const std::vector<int> counts =
        histogram({.temperature = temperature, .seed = 42}, logits, kDraws);
    // 7 degrees of freedom: P(chi2 > 35) ~ 1e-5. The seed is fixed, so this is
    // deterministic; the bound only has to hold for a correct sampler.
    EXPECT_LT(chi_square(counts, softmax(logits, temperature), kDraws), 35.0)
        << "temperature " << temperature;
  }
}

TEST(SamplerTest, TopKSamplesFromTheRenormalizedTopK) {
  const std::vector<float> logits = {1.0f, 0.5f, 0.0f, -0.5f, 2.0f, -3.0f, 1.5f, 0.2f};
  constexpr int kDraws = 20000;
  const std::vector<int> counts = histogram({.top_k = 3, .seed = 5}, logits, kDraws);
  // The top 3 are ids 4, 6, 0; everything else must never appear.
  const std::vector<float> top3 = {logits[4], logits[6], logits[0]};
  const std::vector<double> probs = softmax(top3, 1.0);
  EXPECT_LT(chi_square({counts[4], counts[6], counts[0]}, probs, kDraws), 25.0);
  EXPECT_EQ(counts[4] + counts[6] + counts[0], kDraws);
}

TEST(SamplerTest, TopKOneAndTinyTopPAreGreedy) {
  Sampler top_k_one({.temperature = 1.5f, .top_k = 1, .seed = 3});
  Sampler tiny_top_p({.temperature = 1.5f, .top_p = 1e-6f, .seed = 4});
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const std::vector<float> logits = random_logits(5000, seed, 1.0);
    EXPECT_EQ(top_k_one.sample(logits, {}, {}).id, argmax(logits));
    EXPECT_EQ(tiny_top_p.sample(logits, {}, {}).id, argmax(logits));
  }
}

TEST(SamplerTest, MinPNeverDrawsFilteredTokensAndDrawsAllOthers) {
  // Probabilities 0.4, 0.3, 0.15, 0.1, 0.05: min_p 0.3 keeps p >= 0.12, ids 0..2,
  // renormalized to 0.4/0.85, 0.3/0.85, 0.15/0.85.
  std::vector<float> logits;
  for (double p : {0.4, 0.3, 0.15, 0.1, 0.05}) logits.push_back(static_cast<float>(std::log(p)));
  constexpr int kDraws = 20000;
  const std::vector<int> counts = histogram({.min_p = 0.3f, .seed = 8}, logits, kDraws);
  EXPECT_EQ(counts[3], 0);
  EXPECT_EQ(counts[4], 0);
  EXPECT_LT(chi_square({counts[0], counts[1], counts[2]},
                       {0.4 / 0.85, 0.3 / 0.85, 0.15 / 0.85}, kDraws),
            25.0);
}

TEST(SamplerTest, PenaltiesChangeTheGreedyChoice) {
  const std::vector<float> logits = {3.0f, 2.9f, 2.8f};
  const std::vector<int32_t> generated = {0};
  // presence 0.5: 3 - 0.5 = 2.5 < 2.9.
  Sampler presence({.temperature = 0.0f, .presence_penalty = 0.5f});
  EXPECT_EQ(presence.sample(logits, {}, generated).id, 1);
  // frequency 0.15 per occurrence: 0 twice gives 2.7; 1 once gives 2.75; 2 stays 2.8.
  Sampler frequency({.temperature = 0.0f, .frequency_penalty = 0.15f});
  const std::vector<int32_t> twice = {0, 1, 0};
  EXPECT_EQ(frequency.sample(logits, {}, twice).id, 2);
  // Repetition covers the prompt: 3 / 1.2 = 2.5 < 2.9.
  Sampler repetition({.temperature = 0.0f, .repetition_penalty = 1.2f});
  const std::vector<int32_t> prompt = {0};
  EXPECT_EQ(repetition.sample(logits, prompt, {}).id, 1);
  // Frequency and presence do not cover the prompt.
  EXPECT_EQ(presence.sample(logits, prompt, {}).id, 0);
}

TEST(SamplerTest, LogprobsAreTheLogSoftmaxOfTheRawLogits) {
  const std::vector<float> logits = random_logits(1000, 77);
  // Penalties and temperature change what is drawn, never what is reported.
  Sampler sampler({.temperature = 0.6f,
                   .top_k = 50,
                   .repetition_penalty = 1.3f,
                   .presence_penalty = 1.0f,
                   .seed = 11,
                   .n_logprobs = 20});
  const std::vector<int32_t> prompt = {argmax(logits), 5, 6};
  const std::vector<int32_t> generated = {7, 7, 8};

  double max_logit = *std::max_element(logits.begin(), logits.end());
  double total = 0.0;
  for (float logit : logits) total += std::exp(logit - max_logit);
  const double log_normalizer = max_logit + std::log(total);

  std::vector<int32_t> by_likelihood(logits.size());
  std::iota(by_likelihood.begin(), by_likelihood.end(), 0);
  std::sort(by_likelihood.begin(), by_likelihood.end(),
            [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });

  for (int step = 0; step < 20; ++step) {
    const SampledToken token = sampler.sample(logits, prompt, generated);
    EXPECT_NEAR(token.logprob, logits[token.id] - log_normalizer, 1e-6);
    ASSERT_EQ(token.top.size(), 20u);
    for (size_t i = 0; i < token.top.size(); ++i) {
      EXPECT_EQ(token.top[i].id, by_likelihood[i]);
      EXPECT_NEAR(token.top[i].logprob, logits[by_likelihood[i]] - log_normalizer, 1e-6);
      if (i > 0) {
        EXPECT_GE(token.top[i - 1].logprob, token.top[i].logprob);
      }
    }
  }
}

TEST(SamplerTest, NoLogprobsRequestedGivesAnEmptyTopList) {
  Sampler sampler({.seed = 2});
  const std::vector<float> logits = {0.0f, std::log(3.0f)};
  const SampledToken token = sampler.sample(logits, {}, {});
  EXPECT_TRUE(token.top.empty());
  EXPECT_NEAR(token.logprob, token.id == 0 ? std::log(0.25) : std::log(0.75), 1e-6);
}

// Without logprobs the same tokens are drawn (the same random stream is
// used), and logprob / top stay empty: the normalizing pass is skipped.
TEST(SamplerTest, WithoutLogprobsTheSameTokensComeOut) {
  for (float temperature : {0.0f, 1.0f, 0.7f}) {
    const SamplingParams params{.temperature = temperature, .top_p = 0.9f, .seed = 5,
                                .n_logprobs = 3};
    Sampler with(params);
    Sampler without(params);
    for (int step = 0; step < 50; ++step) {
      const std::vector<float> logits = random_logits(1000, 77 + static_cast<uint64_t>(step));
      const SampledToken a = with.sample(logits, {}, {});
      const SampledToken b = without.sample(logits, {}, {}, /*with_logprobs=*/false);
      EXPECT_EQ(a.id, b.id) << temperature << " step " << step;
      EXPECT_EQ(a.top.size(), 3u);
      EXPECT_TRUE(b.top.empty());
      EXPECT_EQ(b.logprob, 0.0f);
    }
  }
}

TEST(SamplerTest, TopLogprobsAreCappedByTheVocabulary) {
  Sampler sampler({.temperature = 0.0f, .n_logprobs = 5});
  const std::vector<float> logits = {0.0f, 1.0f, 1.0f};
  const SampledToken token = sampler.sample(logits, {}, {});
  EXPECT_EQ(token.id, 1);
  ASSERT_EQ(token.top.size(), 3u);
  EXPECT_EQ(token.top[0].id, 1);  // equal logits: lower id first
  EXPECT_EQ(token.top[1].id, 2);
  EXPECT_EQ(token.top[2].id, 0);
}

TEST(SamplerTest, MaskedTokensAreNeverDrawn) {
  std::vector<float> logits(100, -INFINITY);
  logits[10] = 0.0f;
  logits[90] = 0.0f;
  Sampler sampler({.seed = 6});
  std::set<int32_t> seen;
  for (int i = 0; i < 200; ++i) seen.insert(sampler.sample(logits, {}, {}).id);
  EXPECT_EQ(seen, (std::set<int32_t>{10, 90}));
}

// prepare_choice hands a backend the sampler's state: its params, the
// penalties, and the uniform sample() would draw (so a sequence chosen on a
// GPU keeps its seed's stream of draws); greedy draws none.
TEST(SamplerTest, PrepareChoiceDrawsWhatSampleWouldDraw) {
  const SamplingParams sampled{.temperature = 0.8f, .top_p = 0.9f, .repetition_penalty = 1.2f,
                               .seed = 42, .n_logprobs = 3};
  Sampler sampler(sampled);
  Xoshiro256 same_seed(42);
  const std::vector<int32_t> prompt = {4, 4, 9};
  const std::vector<int32_t> generated = {9, 2};
  TokenChoice choice;
  for (int i = 0; i < 3; ++i) {
    sampler.prepare_choice(prompt, generated, /*with_logprobs=*/true, 16, choice);
    EXPECT_EQ(choice.uniform, same_seed.uniform01()) << "draw " << i;
  }
  EXPECT_EQ(choice.params.top_p, 0.9f);
  EXPECT_EQ(choice.params.n_logprobs, 3);
  EXPECT_TRUE(choice.with_logprobs);
  EXPECT_EQ(choice.penalties.size(), 3u);  // 9, 2, 4: prompt and generated, each once

  Sampler greedy({.temperature = 0.0f, .seed = 42});
  greedy.prepare_choice(prompt, generated, false, 16, choice);
  EXPECT_EQ(choice.uniform, 0.0);
  EXPECT_TRUE(choice.penalties.empty());
  EXPECT_FALSE(choice.with_logprobs);
}

TEST(SamplerDeathTest, InvalidParamsAndNanLogitsAreBugs) {
  EXPECT_DEATH(Sampler({.temperature = -1.0f}), "invalid SamplingParams");
  Sampler sampler({});
  const std::vector<float> logits = {0.0f, NAN};
  EXPECT_DEATH(sampler.sample(logits, {}, {}), "NaN logit");
}

}  // namespace
}  // namespace strata
