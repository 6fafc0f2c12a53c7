#include "engine/sampler/sampler.h"

#include <cmath>

#include "common/check.h"
#include "engine/sampler/candidate_selection.h"

namespace strata {
namespace {

// The largest logit, lowest id among equals.
int32_t argmax(std::span<const float> logits) {
  size_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[best]) best = i;
  }
  return static_cast<int32_t>(best);
}

float max_of(std::span<const float> logits) {
  float max_logit = -INFINITY;
  for (float logit : logits) max_logit = logit > max_logit ? logit : max_logit;
  return max_logit;
}

// weights[i] = exp(logits[i] - max_logit), so nothing overflows and the top weighs 1;
// returns their sum, in double so that log(sum) is exact to float precision.
double fill_weights(std::span<const float> logits, float max_logit, std::vector<float>& weights) {
  weights.resize(logits.size());
  double total = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    weights[i] = std::exp(logits[i] - max_logit);
    total += weights[i];
  }
  return total;
}

// log(sum(exp(logits))) without a weights buffer.
double log_sum_exp(std::span<const float> logits, float max_logit) {
  double total = 0.0;
  for (float logit : logits) total += std::exp(logit - max_logit);
  return static_cast<double>(max_logit) + std::log(total);
}

}  // namespace

Sampler::Sampler(const SamplingParams& params)
    : params_(params),
      has_penalties_(params.repetition_penalty != 1.0f || params.frequency_penalty != 0.0f ||
                     params.presence_penalty != 0.0f),
      penalizer_(PenaltyParams{.repetition_penalty = params.repetition_penalty,
                               .frequency_penalty = params.frequency_penalty,
                               .presence_penalty = params.presence_penalty}),
      rng_(params.seed) {
  const auto error = params.validate();
  STRATA_CHECK(!error, "invalid SamplingParams: ", error.value_or(""));
}

SampledToken Sampler::sample(std::span<const float> logits,
                             std::span<const int32_t> prompt_tokens,
                             std::span<const int32_t> generated_tokens, bool with_logprobs) {
  STRATA_CHECK(!logits.empty());
  // The contract on raw logits, checked in the one pass that finds their maximum
  // and where it first is (a greedy pick needs no second pass over 128k logits).
  float max_logit = -INFINITY;
  size_t raw_argmax = 0;
  bool has_nan = false;
  for (size_t i = 0; i < logits.size(); ++i) {
    has_nan |= std::isnan(logits[i]);
    if (logits[i] > max_logit) {
      max_logit = logits[i];
      raw_argmax = i;
    }
  }
  STRATA_CHECK(!has_nan, "NaN logit");
  STRATA_CHECK(std::isfinite(max_logit), "no finite logit: max is ", max_logit);

  SampledToken result;
  result.id = pick(logits, max_logit, static_cast<int32_t>(raw_argmax), prompt_tokens,
                   generated_tokens, with_logprobs);
  if (!with_logprobs) return result;
  const auto logprob_of = [&](int32_t id) {
    return static_cast<float>(static_cast<double>(logits[static_cast<size_t>(id)]) -
                              raw_log_normalizer_);
  };
  result.logprob = logprob_of(result.id);
  if (params_.n_logprobs > 0) {
    most_likely_ids(logits, static_cast<size_t>(params_.n_logprobs), top_ids_);
    result.top.reserve(top_ids_.size());
    for (int32_t id : top_ids_) result.top.push_back({.id = id, .logprob = logprob_of(id)});
  }
  return result;
}

void Sampler::prepare_choice(std::span<const int32_t> prompt_tokens,
                             std::span<const int32_t> generated_tokens, bool with_logprobs,
                             size_t n_vocab, TokenChoice& choice) {
  choice.params = params_;
  choice.with_logprobs = with_logprobs;
  const bool greedy = params_.temperature < SamplingParams::kGreedyTemperature;
  choice.uniform = greedy ? 0.0 : rng_.uniform01();
  if (has_penalties_) {
    penalizer_.list(prompt_tokens, generated_tokens, n_vocab, choice.penalties);
  } else {
    choice.penalties.clear();
  }
}

int32_t Sampler::pick(std::span<const float> logits, float max_logit, int32_t raw_argmax,
                      std::span<const int32_t> prompt_tokens,
                      std::span<const int32_t> generated_tokens, bool normalize) {
  const bool greedy = params_.temperature < SamplingParams::kGreedyTemperature;
  const bool scales = !greedy && params_.temperature != 1.0f;
  std::span<const float> scaled = logits;  // the raw logits while nothing changes them
  float max_scaled = max_logit;
  if (has_penalties_ || scales) {
    scaled_logits_.assign(logits.begin(), logits.end());
    if (has_penalties_) penalizer_.apply(scaled_logits_, prompt_tokens, generated_tokens);
    if (scales) {
      max_scaled = -INFINITY;
      for (float& logit : scaled_logits_) {
        logit /= params_.temperature;
        max_scaled = logit > max_scaled ? logit : max_scaled;
      }
    } else {
      max_scaled = max_of(scaled_logits_);
    }
    scaled = scaled_logits_;
  }
  const bool scaled_is_raw = scaled.data() == logits.data();

  if (greedy) {
    if (normalize) raw_log_normalizer_ = log_sum_exp(logits, max_logit);
    return scaled_is_raw ? raw_argmax : argmax(scaled);
  }

  if (!std::isfinite(max_scaled)) {
    // Extreme penalties or temperatures overflowed to +inf (all the probability is on the
    // infinite tokens) or pushed every logit to -inf (no distribution left): take the
    // argmax, of the scaled logits or of the raw ones, rather than draw from NaNs.
    if (normalize) raw_log_normalizer_ = log_sum_exp(logits, max_logit);
    return argmax(max_scaled > 0.0f ? scaled : logits);
  }

  const double total_weight = fill_weights(scaled, max_scaled, weights_);
  // Unpenalized at temperature 1, the weights are the raw softmax's: no second exp pass.
  if (normalize) {
    raw_log_normalizer_ = scaled_is_raw
                              ? static_cast<double>(max_logit) + std::log(total_weight)
                              : log_sum_exp(logits, max_logit);
  }

  select_candidates({.logits = scaled, .weights = weights_, .total_weight = total_weight},
                    {.top_k = params_.top_k, .top_p = params_.top_p, .min_p = params_.min_p},
                    candidate_ids_);
  return draw();
}

int32_t Sampler::draw() {
  double total = 0.0;
  for (int32_t id : candidate_ids_) total += weights_[static_cast<size_t>(id)];

  // Inverse CDF: the first candidate whose cumulative weight exceeds u * total. Rounding
  // can leave the threshold past the last sum; then the last candidate with weight wins.
  const double threshold = rng_.uniform01() * total;
  double cumulative = 0.0;
  int32_t last_with_weight = candidate_ids_.front();
  for (int32_t id : candidate_ids_) {
    const float weight = weights_[static_cast<size_t>(id)];
    if (weight <= 0.0f) continue;
    cumulative += weight;
    last_with_weight = id;
    if (threshold < cumulative) return id;
  }
  return last_with_weight;
}

}  // namespace strata
