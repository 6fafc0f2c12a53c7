#include "kernels/sampling/logit_penalizer.h"

#include "common/check.h"

namespace strata {

LogitPenalizer::LogitPenalizer(const PenaltyParams& params) : params_(params) {
  STRATA_CHECK(params_.repetition_penalty > 0.0f, "repetition_penalty ",
               params_.repetition_penalty);
}

void LogitPenalizer::apply(std::span<float> logits, std::span<const int32_t> prompt_tokens,
                           std::span<const int32_t> generated_tokens) {
  if (params_.repetition_penalty != 1.0f) {
    count(prompt_tokens, logits.size());
    count(generated_tokens, logits.size());
    for (int32_t id : seen_ids_) {
      float& logit = logits[static_cast<size_t>(id)];
      logit = logit > 0.0f ? logit / params_.repetition_penalty
                           : logit * params_.repetition_penalty;
    }
    reset_counts();
  }
  if (params_.frequency_penalty != 0.0f || params_.presence_penalty != 0.0f) {
    count(generated_tokens, logits.size());
    for (int32_t id : seen_ids_) {
      const auto n = static_cast<float>(counts_[static_cast<size_t>(id)]);
      logits[static_cast<size_t>(id)] -=
          n * params_.frequency_penalty + params_.presence_penalty;
    }
    reset_counts();
  }
}

void LogitPenalizer::list(std::span<const int32_t> prompt_tokens,
                          std::span<const int32_t> generated_tokens, size_t vocab_size,
                          std::vector<PenaltyCount>& out) {
  out.clear();
  const bool repetition = params_.repetition_penalty != 1.0f;
  const bool frequency = params_.frequency_penalty != 0.0f || params_.presence_penalty != 0.0f;
  if (!repetition && !frequency) return;
  count(generated_tokens, vocab_size);
  for (int32_t id : seen_ids_) {
    out.push_back({.id = id,
                   .repeated = repetition,
                   .n_generated = frequency ? static_cast<int32_t>(counts_[static_cast<size_t>(id)])
                                            : 0});
  }
  if (repetition) {
    const size_t n_generated_ids = seen_ids_.size();
    count(prompt_tokens, vocab_size);  // adds the prompt's ids not generated
    for (size_t i = n_generated_ids; i < seen_ids_.size(); ++i) {
      out.push_back({.id = seen_ids_[i], .repeated = true, .n_generated = 0});
    }
  }
  reset_counts();
}

void LogitPenalizer::count(std::span<const int32_t> tokens, size_t vocab_size) {
  if (counts_.size() < vocab_size) counts_.resize(vocab_size, 0);
  for (int32_t id : tokens) {
    STRATA_CHECK(id >= 0 && static_cast<size_t>(id) < vocab_size, "token id ", id,
                 " outside the vocabulary of ", vocab_size);
    if (counts_[static_cast<size_t>(id)]++ == 0) seen_ids_.push_back(id);
  }
}

void LogitPenalizer::reset_counts() {
  for (int32_t id : seen_ids_) counts_[static_cast<size_t>(id)] = 0;
  seen_ids_.clear();
}

}  // namespace strata
