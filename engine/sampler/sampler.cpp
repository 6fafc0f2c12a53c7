#include "engine/sampler/sampler.h"

#include "common/check.h"

namespace strata {

Sampler::Sampler(const SamplingParams& params)
    : params_(params),
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
  prepare_choice(prompt_tokens, generated_tokens, with_logprobs, logits.size(), choice_);
  return chooser_.choose(logits, choice_);
}

void Sampler::prepare_choice(std::span<const int32_t> prompt_tokens,
                             std::span<const int32_t> generated_tokens, bool with_logprobs,
                             size_t n_vocab, TokenChoice& choice) {
  choice.params = params_;
  choice.with_logprobs = with_logprobs;
  const bool greedy = params_.temperature < SamplingParams::kGreedyTemperature;
  choice.uniform = greedy ? 0.0 : rng_.uniform01();
  penalizer_.list(prompt_tokens, generated_tokens, n_vocab, choice.penalties);
}

}  // namespace strata
