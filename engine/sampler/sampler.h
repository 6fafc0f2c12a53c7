// Sampler: one sequence's logits in, one token out, as vLLM samples.
//
// Pipeline, in this order:
//   1. penalties (logit_penalizer.h): repetition over prompt + generated tokens, then
//      frequency and presence over generated tokens;
//   2. temperature: below SamplingParams::kGreedyTemperature, greedy: the largest
//      penalized logit, lowest id among equals; nothing below applies and no random
//      number is drawn. Otherwise logits are divided by the temperature;
//   3. top-k, 4. top-p, 5. min-p (candidate_selection.h);
//   6. draw from the surviving tokens' renormalized probabilities with the sequence's own
//      xoshiro256** generator (seeded by SamplingParams::seed: the same seed and the same
//      logits give the same tokens, on any compiler).
//
// Reported log-probabilities are those of the RAW logits, log_softmax(logits), before
// penalties and temperature, as OpenAI and vLLM report them.
//
// Buffers sized to the vocabulary are kept between calls, so after the first token a call
// allocates only the small `top` vector of its result.
//
// One Sampler per sequence, used by one thread at a time (the engine thread).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/sampler/logit_penalizer.h"
#include "engine/sampler/sampling_params.h"
#include "engine/sampler/token_choice.h"
#include "engine/sampler/xoshiro256.h"

namespace strata {

struct TokenLogprob {
  int32_t id = 0;
  float logprob = 0.0f;  // log_softmax(raw logits)[id], natural log
};

struct SampledToken {
  int32_t id = 0;        // the token drawn
  float logprob = 0.0f;  // its log_softmax(raw logits)
  // The n_logprobs most likely tokens by the raw distribution, most likely first (lower
  // id first among equal logits). The drawn token is included only when it is among
  // them; the caller adds it where OpenAI's format wants it.
  std::vector<TokenLogprob> top;
};

class Sampler {
 public:
  // `params` must be valid (params.validate() is the service's job; checked here).
  explicit Sampler(const SamplingParams& params);

  // Picks the next token of the sequence.
  //   logits:           [vocab] the model's raw output for the position being sampled;
  //                     no NaN, and at least one finite value (-inf masks a token).
  //   prompt_tokens:    the sequence's prompt, for the repetition penalty.
  //   generated_tokens: every token sampled so far (not yet the one returned), for all
  //                     three penalties.
  //   with_logprobs:    fill logprob and top; without, they stay empty (0, {}) and the
  //                     pass over the whole vocabulary that normalizes the logits is
  //                     skipped (a third of a millisecond per token at 128k tokens).
  // Token ids must lie in [0, vocab). The generator advances once per token drawn
  // (not for greedy picks).
  SampledToken sample(std::span<const float> logits, std::span<const int32_t> prompt_tokens,
                      std::span<const int32_t> generated_tokens, bool with_logprobs = true);

  // Instead of sample(), for a backend that chooses where the logits are:
  // fills `choice` (all but batch_index) with what that choice needs. Draws
  // the uniform from the generator when not greedy, as sample() would.
  void prepare_choice(std::span<const int32_t> prompt_tokens,
                      std::span<const int32_t> generated_tokens, bool with_logprobs,
                      size_t n_vocab, TokenChoice& choice);

 private:
  // Steps 1 to 6: the id drawn. Also sets raw_log_normalizer_ when `normalize`.
  // raw_argmax: the first id holding max_logit (the greedy pick when nothing
  // changes the logits).
  int32_t pick(std::span<const float> logits, float max_logit, int32_t raw_argmax,
               std::span<const int32_t> prompt_tokens,
               std::span<const int32_t> generated_tokens, bool normalize);
  // Step 6: one id of candidate_ids_, with probability proportional to its weight.
  int32_t draw();

  SamplingParams params_;
  bool has_penalties_;  // any of the three penalties is on
  LogitPenalizer penalizer_;
  Xoshiro256 rng_;
  // Per-call state, kept only to reuse allocations:
  std::vector<float> scaled_logits_;    // [vocab] penalized, then divided by temperature
  std::vector<float> weights_;          // [vocab] exp(scaled - max(scaled))
  std::vector<int32_t> candidate_ids_;  // [<= vocab] ids that may be drawn
  std::vector<int32_t> top_ids_;        // [n_logprobs] most likely raw ids
  double raw_log_normalizer_ = 0.0;     // log(sum(exp(raw logits)))
};

}  // namespace strata
