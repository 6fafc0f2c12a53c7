// Candidate selection: which tokens may be drawn, after top-k, top-p (nucleus) and min-p
// truncate a distribution. Applied in that order, as vLLM does:
//   1. top-k: keep the k most likely tokens (k = 0 or k >= vocab: off).
//   2. top-p: over the top-k set renormalized, keep the smallest most-likely-first
//      prefix whose probability reaches top_p; the top token is always kept (1: off).
//   3. min-p: drop tokens with p < min_p * p_max (0: off). A ratio of probabilities, so
//      it does not matter that steps 1 and 2 removed tokens.
// "More likely" is a total order: larger logit first, lower id first among equal logits,
// so the kept set never depends on the selection algorithm.
//
// Cost for a 150k vocabulary: top-k is one pass with a k-entry heap; top-p without top-k
// first looks at the 64 most likely tokens the same way, which settles peaked
// distributions, and otherwise sorts as long a prefix as it needs (doubling), never more.
// No exp() is computed here: the caller's weights are reused.
//
// Pure functions of their arguments: callable from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace strata {

struct TruncationParams {
  int32_t top_k = 0;    // >= 0; 0: off
  float top_p = 1.0f;   // (0, 1]; 1: off
  float min_p = 0.0f;   // [0, 1]; 0: off
};

// A distribution over the vocabulary as logits and as unnormalized probabilities.
struct WeightedLogits {
  std::span<const float> logits;   // [vocab] non-empty, finite maximum, no NaN
  std::span<const float> weights;  // [vocab] exp(logits[i] - max(logits)): the top weighs 1
  double total_weight = 0.0;       // sum of weights
};

// The k most likely ids of `logits` (k is capped by the vocabulary), most likely first,
// into `ids` (its old contents are discarded; passed in so a caller can reuse its
// allocation). One pass with a k-entry heap.
void most_likely_ids(std::span<const float> logits, size_t k, std::vector<int32_t>& ids);

// Fills `kept_ids` (old contents discarded, as above) with the ids that survive
// truncation. At least one id is kept: the most likely. Order: most likely first when
// top-k or top-p is on, otherwise ascending id.
void select_candidates(const WeightedLogits& distribution, const TruncationParams& params,
                       std::vector<int32_t>& kept_ids);

}  // namespace strata
