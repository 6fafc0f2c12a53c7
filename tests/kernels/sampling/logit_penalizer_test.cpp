#include "kernels/sampling/logit_penalizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace strata {
namespace {

TEST(LogitPenalizerTest, RepetitionDividesPositiveAndMultipliesNegativeLogits) {
  LogitPenalizer penalizer({.repetition_penalty = 2.0f});
  std::vector<float> logits = {2.0f, -2.0f, 1.0f, 0.5f, -1.0f, 0.0f};
  const std::vector<int32_t> prompt = {0, 1, 0, 5};
  const std::vector<int32_t> generated = {1, 3, 3};
  penalizer.apply(logits, prompt, generated);
  // Tokens 0, 1, 3, 5 occur (once or more: the penalty applies once); 2 and 4 do not.
  EXPECT_EQ(logits, (std::vector<float>{1.0f, -4.0f, 1.0f, 0.25f, -1.0f, 0.0f}));
}

TEST(LogitPenalizerTest, FrequencyAndPresenceCountOnlyGeneratedTokens) {
  LogitPenalizer penalizer({.frequency_penalty = 0.5f, .presence_penalty = 0.25f});
  std::vector<float> logits = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  const std::vector<int32_t> prompt = {0, 0, 1};
  const std::vector<int32_t> generated = {2, 4, 2, 2};
  penalizer.apply(logits, prompt, generated);
  // token 2: 1 - (3 * 0.5 + 0.25) = -0.75; token 4: 1 - (0.5 + 0.25) = 0.25.
  EXPECT_EQ(logits, (std::vector<float>{1.0f, 1.0f, -0.75f, 1.0f, 0.25f}));
}

TEST(LogitPenalizerTest, NegativePenaltiesRaiseLogits) {
  LogitPenalizer penalizer({.frequency_penalty = -1.0f, .presence_penalty = -0.5f});
  std::vector<float> logits = {0.0f, 0.0f};
  const std::vector<int32_t> generated = {1, 1};
  penalizer.apply(logits, {}, generated);
  EXPECT_EQ(logits, (std::vector<float>{0.0f, 2.5f}));
}

TEST(LogitPenalizerTest, RepetitionComesBeforeFrequencyAndPresence) {
  LogitPenalizer penalizer(
      {.repetition_penalty = 2.0f, .frequency_penalty = 0.5f, .presence_penalty = 1.0f});
  std::vector<float> logits = {3.0f, -3.0f, 3.0f};
  const std::vector<int32_t> prompt = {2};
  const std::vector<int32_t> generated = {0, 1, 1};
  penalizer.apply(logits, prompt, generated);
  // token 0: 3 / 2 - (0.5 + 1) = 0; token 1: -3 * 2 - (2 * 0.5 + 1) = -8;
  // token 2 (prompt only): 3 / 2 = 1.5.
  EXPECT_EQ(logits, (std::vector<float>{0.0f, -8.0f, 1.5f}));
}

TEST(LogitPenalizerTest, CallsAreIndependent) {
  LogitPenalizer penalizer(
      {.repetition_penalty = 1.5f, .frequency_penalty = 0.25f, .presence_penalty = 0.5f});
  const std::vector<float> original = {4.0f, -1.0f, 2.0f, 0.5f};
  const std::vector<int32_t> prompt = {3};
  const std::vector<int32_t> generated = {0, 2, 0};
  std::vector<float> first = original;
  penalizer.apply(first, prompt, generated);
  std::vector<float> second = original;
  penalizer.apply(second, prompt, generated);
  EXPECT_EQ(first, second);
  // Another sequence's tokens leave no trace either.
  std::vector<float> other = original;
  penalizer.apply(other, {}, {});
  EXPECT_EQ(other, original);
}

TEST(LogitPenalizerTest, OffPenaltiesChangeNothing) {
  LogitPenalizer penalizer({});
  std::vector<float> logits = {4.0f, -1.0f};
  const std::vector<int32_t> tokens = {0, 1, 1};
  penalizer.apply(logits, tokens, tokens);
  EXPECT_EQ(logits, (std::vector<float>{4.0f, -1.0f}));
}

// list() describes what apply() does: applying its entries the way a GPU
// backend does (cuda_token_choice.cu) gives apply()'s logits bit for bit.
TEST(LogitPenalizerTest, ListedPenaltiesReproduceApply) {
  const PenaltyParams cases[] = {
      {.repetition_penalty = 1.3f},
      {.frequency_penalty = 0.4f, .presence_penalty = -0.2f},
      {.repetition_penalty = 0.8f, .frequency_penalty = 0.1f, .presence_penalty = 0.3f},
      {}};
  const std::vector<int32_t> prompt = {0, 3, 3, 7, 9, 1};
  const std::vector<int32_t> generated = {3, 5, 5, 5, 8, 1};
  for (const PenaltyParams& params : cases) {
    LogitPenalizer penalizer(params);
    std::vector<float> applied = {0.5f, -1.5f, 2.0f,  0.25f,  -0.75f,
                                  3.0f, 1.0f,  -2.0f, 0.125f, 0.0f};
    std::vector<float> listed = applied;
    penalizer.apply(applied, prompt, generated);
    std::vector<PenaltyCount> entries;
    penalizer.list(prompt, generated, listed.size(), entries);
    std::vector<int32_t> ids;
    for (const PenaltyCount& entry : entries) {
      ids.push_back(entry.id);
      float& logit = listed[static_cast<size_t>(entry.id)];
      if (entry.repeated) {
        logit = logit > 0.0f ? logit / params.repetition_penalty
                             : logit * params.repetition_penalty;
      }
      if (entry.n_generated > 0) {
        logit -= static_cast<float>(entry.n_generated) * params.frequency_penalty +
                 params.presence_penalty;
      }
    }
    EXPECT_EQ(listed, applied);
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << "ids listed twice";
  }
  // With the repetition penalty every token of prompt and generated is listed;
  // with only frequency / presence, only the generated ones.
  std::vector<PenaltyCount> entries;
  LogitPenalizer({.repetition_penalty = 1.3f}).list(prompt, generated, 10, entries);
  EXPECT_EQ(entries.size(), 7u);  // 0 1 3 5 7 8 9
  LogitPenalizer({.presence_penalty = 0.5f}).list(prompt, generated, 10, entries);
  EXPECT_EQ(entries.size(), 4u);  // 1 3 5 8
  LogitPenalizer({}).list(prompt, generated, 10, entries);
  EXPECT_TRUE(entries.empty());
}

TEST(LogitPenalizerDeathTest, TokenOutsideVocabularyIsABug) {
  LogitPenalizer penalizer({.presence_penalty = 1.0f});
  std::vector<float> logits = {0.0f, 0.0f};
  const std::vector<int32_t> generated = {2};
  EXPECT_DEATH(penalizer.apply(logits, {}, generated), "outside the vocabulary");
}

}  // namespace
}  // namespace strata
