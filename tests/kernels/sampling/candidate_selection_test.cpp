#include "kernels/sampling/candidate_selection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/sampling/xoshiro256.h"

namespace strata {
namespace {

// Logits whose softmax is exactly `probs` (which sum to 1).
std::vector<float> logits_of(const std::vector<double>& probs) {
  std::vector<float> logits;
  for (double p : probs) logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

std::vector<int32_t> kept(const std::vector<float>& logits, const TruncationParams& params) {
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  std::vector<float> weights;
  double total_weight = 0.0;
  for (float logit : logits) {
    weights.push_back(std::exp(logit - max_logit));
    total_weight += weights.back();
  }
  std::vector<int32_t> ids = {99, 98};  // stale contents must be discarded
  select_candidates({.logits = logits, .weights = weights, .total_weight = total_weight},
                    params, ids);
  return ids;
}

// Probabilities 0.4, 0.3, 0.15, 0.1, 0.05, shuffled over the ids so that "most likely
// first" and "ascending id" differ: id 3 is the most likely.
const std::vector<float> kLogits = logits_of({0.15, 0.05, 0.3, 0.4, 0.1});

TEST(CandidateSelectionTest, NothingOnKeepsEveryIdInIdOrder) {
  EXPECT_EQ(kept(kLogits, {}), (std::vector<int32_t>{0, 1, 2, 3, 4}));
}

TEST(CandidateSelectionTest, TopKKeepsTheKMostLikelyMostLikelyFirst) {
  EXPECT_EQ(kept(kLogits, {.top_k = 1}), (std::vector<int32_t>{3}));
  EXPECT_EQ(kept(kLogits, {.top_k = 3}), (std::vector<int32_t>{3, 2, 0}));
  EXPECT_EQ(kept(kLogits, {.top_k = 5}), (std::vector<int32_t>{0, 1, 2, 3, 4}));   // = vocab: off
  EXPECT_EQ(kept(kLogits, {.top_k = 50}), (std::vector<int32_t>{0, 1, 2, 3, 4}));  // > vocab: off
}

TEST(CandidateSelectionTest, TopKBreaksTiesByLowerId) {
  const std::vector<float> flat(10, 0.5f);
  EXPECT_EQ(kept(flat, {.top_k = 3}), (std::vector<int32_t>{0, 1, 2}));
}

TEST(CandidateSelectionTest, TopPKeepsTheSmallestPrefixReachingP) {
  // Cumulative most-likely-first: 0.4, 0.7, 0.85, 0.95, 1.
  EXPECT_EQ(kept(kLogits, {.top_p = 0.3f}), (std::vector<int32_t>{3}));
  EXPECT_EQ(kept(kLogits, {.top_p = 0.5f}), (std::vector<int32_t>{3, 2}));
  EXPECT_EQ(kept(kLogits, {.top_p = 0.8f}), (std::vector<int32_t>{3, 2, 0}));
  EXPECT_EQ(kept(kLogits, {.top_p = 0.9f}), (std::vector<int32_t>{3, 2, 0, 4}));
  EXPECT_EQ(kept(kLogits, {.top_p = 0.99f}), (std::vector<int32_t>{3, 2, 0, 4, 1}));
  EXPECT_EQ(kept(kLogits, {.top_p = 1e-6f}), (std::vector<int32_t>{3}));
}

TEST(CandidateSelectionTest, TopPWorksOnTheRenormalizedTopKSet) {
  // Top 2 renormalized: 0.4/0.7 = 0.571, 0.3/0.7 = 0.429.
  EXPECT_EQ(kept(kLogits, {.top_k = 2, .top_p = 0.6f}), (std::vector<int32_t>{3, 2}));
  EXPECT_EQ(kept(kLogits, {.top_k = 2, .top_p = 0.55f}), (std::vector<int32_t>{3}));
}

TEST(CandidateSelectionTest, MinPDropsTokensBelowAFractionOfTheTop) {
  // p_max = 0.4. min_p 0.3: threshold 0.12 keeps 0.4, 0.3, 0.15.
  EXPECT_EQ(kept(kLogits, {.min_p = 0.3f}), (std::vector<int32_t>{0, 2, 3}));
  // min_p 0.2: threshold 0.08 keeps 0.1 too.
  EXPECT_EQ(kept(kLogits, {.min_p = 0.2f}), (std::vector<int32_t>{0, 2, 3, 4}));
  // min_p 0.9: only the top; min_p 1: the top (and exact equals, none here).
  EXPECT_EQ(kept(kLogits, {.min_p = 0.9f}), (std::vector<int32_t>{3}));
  EXPECT_EQ(kept(kLogits, {.min_p = 1.0f}), (std::vector<int32_t>{3}));
  // After top-k the order is most likely first, and stays so.
  EXPECT_EQ(kept(kLogits, {.top_k = 4, .min_p = 0.3f}), (std::vector<int32_t>{3, 2, 0}));
  // After top-p: the nucleus at 0.9 is {3, 2, 0, 4}; min-p 0.3 then drops 4.
  EXPECT_EQ(kept(kLogits, {.top_p = 0.9f, .min_p = 0.3f}), (std::vector<int32_t>{3, 2, 0}));
}

TEST(CandidateSelectionTest, MaskedTokensAreNeverKept) {
  const std::vector<float> logits = {-INFINITY, 1.0f, -INFINITY, 0.0f};
  EXPECT_EQ(kept(logits, {.top_p = 0.999f}), (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(kept(logits, {.min_p = 1e-6f}), (std::vector<int32_t>{1, 3}));
}

// A flat-ish 10k vocabulary makes top-p need most of it, so the sorted prefix must grow
// many times; the result must equal a full sort's.
TEST(CandidateSelectionTest, TopPOnALargeFlatVocabularyMatchesAFullSort) {
  Xoshiro256 rng(3);
  std::vector<float> logits(10000);
  for (float& logit : logits) logit = static_cast<float>(rng.uniform01() * 2.0);
  logits[17] = logits[4242];  // a tie, broken by id

  for (float top_p : {0.05f, 0.5f, 0.9f, 0.999f}) {
    std::vector<int32_t> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    });
    const float max_logit = logits[order[0]];
    double total = 0.0;
    for (float logit : logits) total += std::exp(logit - max_logit);
    double cumulative = 0.0;
    size_t n_keep = 0;
    while (n_keep < order.size() && cumulative < top_p * total) {
      cumulative += std::exp(logits[order[n_keep]] - max_logit);
      ++n_keep;
    }
    order.resize(n_keep);
    EXPECT_GT(n_keep, 100u);
    EXPECT_EQ(kept(logits, {.top_p = top_p}), order) << "top_p " << top_p;
  }
}

TEST(CandidateSelectionTest, MostLikelyIdsAreSortedAndCapped) {
  std::vector<int32_t> ids = {7, 7, 7};
  most_likely_ids(kLogits, 2, ids);
  EXPECT_EQ(ids, (std::vector<int32_t>{3, 2}));
  most_likely_ids(kLogits, 10, ids);
  EXPECT_EQ(ids, (std::vector<int32_t>{3, 2, 0, 4, 1}));
  most_likely_ids(kLogits, 0, ids);
  EXPECT_TRUE(ids.empty());
  // Ties go to the lower id, wherever the equal logits sit.
  const std::vector<float> tied = {0.0f, 2.0f, 1.0f, 2.0f, 2.0f, 1.0f};
  most_likely_ids(tied, 4, ids);
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 3, 4, 2}));
}

TEST(CandidateSelectionTest, MostLikelyIdsMatchAFullSortOnALargeVocabulary) {
  Xoshiro256 rng(9);
  std::vector<float> logits(50000);
  // Few distinct values, so that ties are everywhere.
  for (float& logit : logits) logit = static_cast<float>(rng.next() % 1000);
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  std::vector<int32_t> ids;
  for (size_t k : {1u, 20u, 1000u}) {
    most_likely_ids(logits, k, ids);
    EXPECT_EQ(ids, std::vector<int32_t>(order.begin(), order.begin() + k)) << "k " << k;
  }
}

}  // namespace
}  // namespace strata
