#include "kernels/sampling/sampling_params.h"

#include <cmath>

#include "common/str_cat.h"

namespace strata {

// Each test is written so that NaN fails it (every comparison with NaN is false).
std::optional<std::string> SamplingParams::validate() const {
  if (!(temperature >= 0.0f) || std::isinf(temperature)) {
    return str_cat("temperature must be a finite number >= 0, got ", temperature);
  }
  if (top_k < 0) {
    return str_cat("top_k must be >= 0 (0 disables it), got ", top_k);
  }
  if (!(top_p > 0.0f && top_p <= 1.0f)) {
    return str_cat("top_p must be in (0, 1], got ", top_p);
  }
  if (!(min_p >= 0.0f && min_p <= 1.0f)) {
    return str_cat("min_p must be in [0, 1], got ", min_p);
  }
  if (!(repetition_penalty > 0.0f) || std::isinf(repetition_penalty)) {
    return str_cat("repetition_penalty must be a finite number > 0, got ", repetition_penalty);
  }
  if (!(frequency_penalty >= -2.0f && frequency_penalty <= 2.0f)) {
    return str_cat("frequency_penalty must be in [-2, 2], got ", frequency_penalty);
  }
  if (!(presence_penalty >= -2.0f && presence_penalty <= 2.0f)) {
    return str_cat("presence_penalty must be in [-2, 2], got ", presence_penalty);
  }
  if (n_logprobs < 0 || n_logprobs > kMaxLogprobs) {
    return str_cat("top_logprobs must be in [0, ", kMaxLogprobs, "], got ", n_logprobs);
  }
  return std::nullopt;
}

}  // namespace strata
