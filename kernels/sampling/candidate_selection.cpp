#include "kernels/sampling/candidate_selection.h"

#include <algorithm>
#include <numeric>

#include "common/check.h"

namespace strata {
namespace {

// How many most likely ids top-p looks at first. Peaked distributions (the usual case)
// need no more; flatter ones fall back to sorting a doubling prefix.
constexpr size_t kFirstNucleusPrefix = 64;

// The strict total order "more likely": larger logit, then lower id.
struct MoreLikely {
  std::span<const float> logits;
  bool operator()(int32_t a, int32_t b) const {
    const float la = logits[static_cast<size_t>(a)];
    const float lb = logits[static_cast<size_t>(b)];
    return la > lb || (la == lb && a < b);
  }
};

// Reorders `ids` so that its first n_first entries are its n_first most likely, sorted
// most likely first; the rest are left in no particular order.
void sort_most_likely_prefix(std::span<const float> logits, std::span<int32_t> ids,
                             size_t n_first) {
  const MoreLikely more_likely{logits};
  const auto middle = ids.begin() + static_cast<std::ptrdiff_t>(n_first);
  if (n_first < ids.size()) std::nth_element(ids.begin(), middle, ids.end(), more_likely);
  std::sort(ids.begin(), middle, more_likely);
}

// The length of the shortest prefix of `sorted_ids` whose weight reaches `target`; 0 when
// even the whole does not (more ids are needed, or rounding left the sum just short).
size_t nucleus_size(std::span<const float> weights, std::span<const int32_t> sorted_ids,
                    double target) {
  double cumulative = 0.0;
  for (size_t i = 0; i < sorted_ids.size(); ++i) {
    cumulative += weights[static_cast<size_t>(sorted_ids[i])];
    if (cumulative >= target) return i + 1;
  }
  return 0;
}

// Top-p over all of the vocabulary: `ids` becomes the nucleus, most likely first.
void keep_nucleus_of_vocabulary(const WeightedLogits& distribution, float top_p,
                                std::vector<int32_t>& ids) {
  const size_t vocab = distribution.logits.size();
  const double target = static_cast<double>(top_p) * distribution.total_weight;

  most_likely_ids(distribution.logits, kFirstNucleusPrefix, ids);
  const size_t n_keep = nucleus_size(distribution.weights, ids, target);
  if (n_keep > 0) {
    ids.resize(n_keep);
    return;
  }
  if (ids.size() == vocab) return;  // all of it: rounding kept the sum short of target

  // A flat distribution: sort a doubling prefix of the whole vocabulary until the mass is
  // reached. Each round sorts only the tail, which is all less likely than the prefix.
  ids.resize(vocab);
  std::iota(ids.begin(), ids.end(), 0);
  size_t n_sorted = 0;
  double cumulative = 0.0;
  while (n_sorted < vocab) {
    const size_t n_more = std::min(std::max(2 * kFirstNucleusPrefix, n_sorted), vocab - n_sorted);
    std::span<int32_t> tail(ids.begin() + static_cast<std::ptrdiff_t>(n_sorted), ids.end());
    sort_most_likely_prefix(distribution.logits, tail, n_more);
    for (size_t i = n_sorted; i < n_sorted + n_more; ++i) {
      cumulative += distribution.weights[static_cast<size_t>(ids[i])];
      if (cumulative >= target) {
        ids.resize(i + 1);
        return;
      }
    }
    n_sorted += n_more;
  }
}

}  // namespace

void most_likely_ids(std::span<const float> logits, size_t k, std::vector<int32_t>& ids) {
  k = std::min(k, logits.size());
  ids.resize(k);
  if (k == 0) return;
  std::iota(ids.begin(), ids.end(), 0);
  // A heap whose front is the least likely of the k best so far. Ids are scanned in
  // ascending order, so a later id beats the front only with a strictly larger logit.
  const MoreLikely more_likely{logits};
  std::make_heap(ids.begin(), ids.end(), more_likely);
  float threshold = logits[static_cast<size_t>(ids.front())];
  for (size_t i = k; i < logits.size(); ++i) {
    if (logits[i] > threshold) {
      std::pop_heap(ids.begin(), ids.end(), more_likely);
      ids.back() = static_cast<int32_t>(i);
      std::push_heap(ids.begin(), ids.end(), more_likely);
      threshold = logits[static_cast<size_t>(ids.front())];
    }
  }
  std::sort(ids.begin(), ids.end(), more_likely);
}

void select_candidates(const WeightedLogits& distribution, const TruncationParams& params,
                       std::vector<int32_t>& kept_ids) {
  const size_t vocab = distribution.logits.size();
  STRATA_CHECK(vocab > 0 && distribution.weights.size() == vocab, "logits ", vocab,
               ", weights ", distribution.weights.size());
  const bool top_k_on = params.top_k > 0 && static_cast<size_t>(params.top_k) < vocab;
  const bool top_p_on = params.top_p < 1.0f;

  if (top_k_on) {
    most_likely_ids(distribution.logits, static_cast<size_t>(params.top_k), kept_ids);
    if (top_p_on) {
      double top_k_weight = 0.0;
      for (int32_t id : kept_ids) top_k_weight += distribution.weights[static_cast<size_t>(id)];
      const size_t n_keep = nucleus_size(distribution.weights, kept_ids,
                                         static_cast<double>(params.top_p) * top_k_weight);
      if (n_keep > 0) kept_ids.resize(n_keep);  // 0: rounding; all k reach top_p
    }
  } else if (top_p_on) {
    keep_nucleus_of_vocabulary(distribution, params.top_p, kept_ids);
  } else {
    kept_ids.resize(vocab);
    std::iota(kept_ids.begin(), kept_ids.end(), 0);
  }

  if (params.min_p > 0.0f) {
    // p < min_p * p_max  <=>  weight < min_p, the top weighing 1 (and always staying).
    std::erase_if(kept_ids, [&](int32_t id) {
      return distribution.weights[static_cast<size_t>(id)] < params.min_p;
    });
  }
}

}  // namespace strata
