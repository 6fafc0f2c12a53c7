#include "kernels/sampling/token_chooser.h"

#include <cmath>

#include "common/check.h"
#include "kernels/sampling/candidate_selection.h"

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

void apply_penalties(std::span<float> logits, const SamplingParams& params,
                     std::span<const PenaltyCount> penalties) {
  const bool repetition = params.repetition_penalty != 1.0f;
  const bool frequency_or_presence =
      params.frequency_penalty != 0.0f || params.presence_penalty != 0.0f;
  for (const PenaltyCount& token : penalties) {
    STRATA_CHECK(token.id >= 0 && static_cast<size_t>(token.id) < logits.size(), "token id ",
                 token.id, " outside the vocabulary of ", logits.size());
    float& logit = logits[static_cast<size_t>(token.id)];
    if (repetition && token.repeated) {
      logit = logit > 0.0f ? logit / params.repetition_penalty
                           : logit * params.repetition_penalty;
    }
    if (frequency_or_presence && token.n_generated > 0) {
      logit -= static_cast<float>(token.n_generated) * params.frequency_penalty +
               params.presence_penalty;
    }
  }
}

SampledToken TokenChooser::choose(std::span<const float> logits, const TokenChoice& choice) {
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
  result.id = pick(logits, max_logit, static_cast<int32_t>(raw_argmax), choice,
                   choice.with_logprobs);
  if (!choice.with_logprobs) return result;
  const auto logprob_of = [&](int32_t id) {
    return static_cast<float>(static_cast<double>(logits[static_cast<size_t>(id)]) -
                              raw_log_normalizer_);
  };
  result.logprob = logprob_of(result.id);
  if (choice.params.n_logprobs > 0) {
    most_likely_ids(logits, static_cast<size_t>(choice.params.n_logprobs), top_ids_);
    result.top.reserve(top_ids_.size());
    for (int32_t id : top_ids_) result.top.push_back({.id = id, .logprob = logprob_of(id)});
  }
  return result;
}

int32_t TokenChooser::pick(std::span<const float> logits, float max_logit, int32_t raw_argmax,
                           const TokenChoice& choice, bool normalize) {
  const SamplingParams& params = choice.params;
  const bool greedy = params.temperature < SamplingParams::kGreedyTemperature;
  const bool scales = !greedy && params.temperature != 1.0f;
  const bool penalizes = !choice.penalties.empty();
  std::span<const float> scaled = logits;  // the raw logits while nothing changes them
  float max_scaled = max_logit;
  if (penalizes || scales) {
    scaled_logits_.assign(logits.begin(), logits.end());
    if (penalizes) apply_penalties(scaled_logits_, params, choice.penalties);
    if (scales) {
      max_scaled = -INFINITY;
      for (float& logit : scaled_logits_) {
        logit /= params.temperature;
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
                    {.top_k = params.top_k, .top_p = params.top_p, .min_p = params.min_p},
                    candidate_ids_);
  return draw(choice.uniform);
}

int32_t TokenChooser::draw(double uniform) const {
  double total = 0.0;
  for (int32_t id : candidate_ids_) total += weights_[static_cast<size_t>(id)];

  // Inverse CDF: the first candidate whose cumulative weight exceeds u * total. Rounding
  // can leave the threshold past the last sum; then the last candidate with weight wins.
  const double threshold = uniform * total;
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
