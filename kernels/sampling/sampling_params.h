// SamplingParams: how one sequence turns logits into tokens, as a request asks for it
// (OpenAI / vLLM names and meanings). Plain data: the service fills it from the JSON body,
// calls validate() once at the edge, and the engine hands it to a Sampler (sampler.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace strata {

struct SamplingParams {
  // Logits are divided by this before drawing. Below kGreedyTemperature (0 included):
  // greedy argmax, no randomness. >= 0.
  float temperature = 1.0f;
  // Keep only the k most likely tokens. 0: off. >= 0 (k >= vocab is off too).
  int32_t top_k = 0;
  // Nucleus: keep the smallest most-likely-first set whose probability reaches top_p.
  // In (0, 1]; 1: off.
  float top_p = 1.0f;
  // Drop tokens whose probability is below min_p times the top token's. In [0, 1]; 0: off.
  float min_p = 0.0f;
  // HF/CTRL style over prompt and generated tokens: a positive logit is divided by it,
  // a negative one multiplied. > 0; 1: off.
  float repetition_penalty = 1.0f;
  // OpenAI: logit -= count * frequency_penalty, count = occurrences among generated
  // tokens. In [-2, 2]; 0: off.
  float frequency_penalty = 0.0f;
  // OpenAI: logit -= presence_penalty once a token occurs among generated tokens.
  // In [-2, 2]; 0: off.
  float presence_penalty = 0.0f;
  // Seeds the sequence's own random generator: the same seed and the same logits give
  // the same tokens. The service picks a random seed when the request gives none.
  uint64_t seed = 0;
  // How many most-likely alternatives to report with each token (OpenAI top_logprobs).
  // In [0, kMaxLogprobs].
  int32_t n_logprobs = 0;

  static constexpr float kGreedyTemperature = 1e-5f;  // vLLM's _SAMPLING_EPS
  static constexpr int32_t kMaxLogprobs = 20;         // OpenAI's limit

  // The first out-of-range field, named as the OpenAI request names it
  // ("temperature must be >= 0, got -1"); nullopt when every field is valid.
  // NaN is out of every range.
  std::optional<std::string> validate() const;
};

}  // namespace strata
