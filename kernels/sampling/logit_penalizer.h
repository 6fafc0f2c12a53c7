// LogitPenalizer: the repetition, frequency and presence penalties, applied to one row
// of logits in place, with vLLM's semantics and order:
//   1. repetition (HF/CTRL): for each distinct token in prompt ∪ generated,
//        logit > 0 ? logit / repetition_penalty : logit * repetition_penalty
//   2. frequency and presence (OpenAI): for each distinct token among generated, with
//      count its occurrences there,
//        logit -= count * frequency_penalty + presence_penalty
// Counts are recomputed from the token spans on every call, so the caller keeps no
// bookkeeping and a preempted or recomputed sequence needs nothing special; the cost is
// one pass over the tokens, and nothing when the penalties are off.
//
// One penalizer per sequence (Sampler owns one), used by one thread at a time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/sampling/token_choice.h"

namespace strata {

struct PenaltyParams {
  float repetition_penalty = 1.0f;  // > 0; 1: off
  float frequency_penalty = 0.0f;   // 0: off
  float presence_penalty = 0.0f;    // 0: off
};

class LogitPenalizer {
 public:
  explicit LogitPenalizer(const PenaltyParams& params);

  // Penalizes `logits` (one per vocabulary id) in place. Every token id in the spans
  // must be in [0, logits.size()).
  void apply(std::span<float> logits, std::span<const int32_t> prompt_tokens,
             std::span<const int32_t> generated_tokens);

  // What apply() would do, as one entry per distinct id it would change
  // (generated ids first, then the prompt's others), for a backend that
  // penalizes the logits where they are. Ids must be in [0, vocab_size).
  void list(std::span<const int32_t> prompt_tokens, std::span<const int32_t> generated_tokens,
            size_t vocab_size, std::vector<PenaltyCount>& out);

 private:
  // Counts occurrences of each id of `tokens` into counts_, listing first sightings in
  // seen_ids_. Ids already counted by an earlier call (since the last reset) add up.
  void count(std::span<const int32_t> tokens, size_t vocab_size);
  // Zeroes counts_ at seen_ids_ and empties seen_ids_: O(distinct ids), not O(vocab).
  void reset_counts();

  PenaltyParams params_;
  std::vector<uint32_t> counts_;    // [vocab] occurrences; all zero between calls
  std::vector<int32_t> seen_ids_;   // ids with counts_ > 0, in order of first sighting
};

}  // namespace strata
