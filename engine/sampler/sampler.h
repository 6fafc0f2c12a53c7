// Sampler: one sequence's logits in, one token out, as vLLM samples. It keeps
// what is the sequence's own — its parameters, its penalty counts and its
// xoshiro256** generator (seeded by SamplingParams::seed: the same seed and the
// same logits give the same tokens, on any compiler) — and turns each step into
// a TokenChoice: the token is chosen from it by the CPU reference
// (kernels/sampling/token_chooser.h), or, where the logits are on the GPU, by
// the backend from the same TokenChoice (prepare_choice). Either way the
// generator advances once per token drawn (not for greedy picks).
//
// One Sampler per sequence, used by one thread at a time (the engine thread).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/sampling/logit_penalizer.h"
#include "kernels/sampling/sampling_params.h"
#include "kernels/sampling/token_choice.h"
#include "kernels/sampling/token_chooser.h"
#include "kernels/sampling/xoshiro256.h"

namespace strata {

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
  // Token ids must lie in [0, vocab). The generator advances once per token
  // drawn (not for greedy picks).
  SampledToken sample(std::span<const float> logits, std::span<const int32_t> prompt_tokens,
                      std::span<const int32_t> generated_tokens, bool with_logprobs = true);

  // Instead of sample(), for a backend that chooses where the logits are:
  // fills `choice` (all but batch_index) with what that choice needs. Draws
  // the uniform from the generator when not greedy, as sample() would.
  void prepare_choice(std::span<const int32_t> prompt_tokens,
                      std::span<const int32_t> generated_tokens, bool with_logprobs,
                      size_t n_vocab, TokenChoice& choice);

 private:
  SamplingParams params_;
  LogitPenalizer penalizer_;
  Xoshiro256 rng_;
  TokenChoice choice_;     // the last step's, kept to reuse its allocations
  TokenChooser chooser_;
};

}  // namespace strata
