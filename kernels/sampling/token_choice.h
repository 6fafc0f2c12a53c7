// TokenChoice: what a backend needs to choose one sequence's next token where
// the logits are (on the GPU) instead of sending the logits to the Sampler:
// the sampling parameters, the penalties as one entry per distinct token, and
// the uniform number the draw uses, taken from the sequence's own generator.
// Sampler::prepare_choice fills it; the backend's choice must be the one
// Sampler::sample would make from the same logits (see sampler.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/sampling/sampling_params.h"

namespace strata {

// One distinct token of prompt ∪ generated, as the penalties see it.
struct PenaltyCount {
  int32_t id = 0;
  bool repeated = false;    // the repetition penalty applies to it
  int32_t n_generated = 0;  // occurrences among generated tokens
};

struct TokenChoice {
  size_t batch_index = 0;  // the sequence in the step's batch; its last row's logits
  SamplingParams params{};
  bool with_logprobs = false;  // the chosen token's logprob and params.n_logprobs alternatives
  double uniform = 0.0;        // the draw's number in [0, 1); unused when greedy
  std::vector<PenaltyCount> penalties{};  // distinct ids; empty when no penalty is on
};

}  // namespace strata
