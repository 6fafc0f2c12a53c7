// TokenChooser: one row of raw logits and a TokenChoice in, one token out —
// the CPU reference of token choice, which the GPU's (cuda/cuda_token_choice.h)
// mirrors step by step, and which the engine's Sampler runs on the CPU.
//
// Pipeline, in this order:
//   1. penalties, from the choice's list of distinct tokens (logit_penalizer.h):
//      repetition, then frequency and presence;
//   2. temperature: below SamplingParams::kGreedyTemperature, greedy: the largest
//      penalized logit, lowest id among equals; nothing below applies. Otherwise
//      logits are divided by the temperature;
//   3. top-k, 4. top-p, 5. min-p (candidate_selection.h);
//   6. the inverse-CDF draw at the choice's uniform number over the surviving
//      tokens' renormalized probabilities.
//
// Reported log-probabilities are those of the RAW logits, log_softmax(logits), before
// penalties and temperature, as OpenAI and vLLM report them.
//
// Buffers sized to the vocabulary are kept between calls, so after the first token a call
// allocates only the small `top` vector of its result. One thread at a time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/sampling/token_choice.h"

namespace strata {

struct TokenLogprob {
  int32_t id = 0;
  float logprob = 0.0f;  // log_softmax(raw logits)[id], natural log
};

struct SampledToken {
  int32_t id = 0;        // the token chosen
  float logprob = 0.0f;  // its log_softmax(raw logits)
  // The n_logprobs most likely tokens by the raw distribution, most likely first (lower
  // id first among equal logits). The chosen token is included only when it is among
  // them; the caller adds it where OpenAI's format wants it.
  std::vector<TokenLogprob> top;
};

class TokenChooser {
 public:
  // logits: [vocab] raw; no NaN, and at least one finite value (-inf masks a
  // token). choice.params must be valid; its penalties' ids in [0, vocab).
  // With choice.with_logprobs, fills logprob and top (params.n_logprobs of
  // them); without, they stay empty and the normalizing pass is skipped.
  SampledToken choose(std::span<const float> logits, const TokenChoice& choice);

 private:
  // Steps 1 to 6: the id chosen. Also sets raw_log_normalizer_ when `normalize`.
  // raw_argmax: the first id holding max_logit (the greedy pick when nothing
  // changes the logits).
  int32_t pick(std::span<const float> logits, float max_logit, int32_t raw_argmax,
               const TokenChoice& choice, bool normalize);
  // Step 6: one id of candidate_ids_, with probability proportional to its weight.
  int32_t draw(double uniform) const;

  // Per-call state, kept only to reuse allocations:
  std::vector<float> scaled_logits_;    // [vocab] penalized, then divided by temperature
  std::vector<float> weights_;          // [vocab] exp(scaled - max(scaled))
  std::vector<int32_t> candidate_ids_;  // [<= vocab] ids that may be drawn
  std::vector<int32_t> top_ids_;        // [n_logprobs] most likely raw ids
  double raw_log_normalizer_ = 0.0;     // log(sum(exp(raw logits)))
};

// Applies `penalties` (what LogitPenalizer::list made) to one row in place:
// repetition on the repeated ids, then frequency and presence by count.
void apply_penalties(std::span<float> logits, const SamplingParams& params,
                     std::span<const PenaltyCount> penalties);

}  // namespace strata
