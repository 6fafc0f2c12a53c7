#include "kernels/sampling/sampling_params.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace strata {
namespace {

// The error for `params`, or "" when valid.
std::string error_of(const SamplingParams& params) { return params.validate().value_or(""); }

TEST(SamplingParamsTest, DefaultsAreValid) { EXPECT_EQ(error_of(SamplingParams{}), ""); }

TEST(SamplingParamsTest, BoundaryValuesAreValid) {
  EXPECT_EQ(error_of({.temperature = 0.0f}), "");
  EXPECT_EQ(error_of({.temperature = 100.0f}), "");
  EXPECT_EQ(error_of({.top_k = 1}), "");
  EXPECT_EQ(error_of({.top_p = 1.0f}), "");
  EXPECT_EQ(error_of({.top_p = 1e-6f}), "");
  EXPECT_EQ(error_of({.min_p = 0.0f}), "");
  EXPECT_EQ(error_of({.min_p = 1.0f}), "");
  EXPECT_EQ(error_of({.repetition_penalty = 1e-3f}), "");
  EXPECT_EQ(error_of({.frequency_penalty = -2.0f, .presence_penalty = 2.0f}), "");
  EXPECT_EQ(error_of({.frequency_penalty = 2.0f, .presence_penalty = -2.0f}), "");
  EXPECT_EQ(error_of({.n_logprobs = 20}), "");
  EXPECT_EQ(error_of({.seed = ~uint64_t{0}}), "");
}

TEST(SamplingParamsTest, OutOfRangeValuesNameTheField) {
  EXPECT_EQ(error_of({.temperature = -0.5f}),
            "temperature must be a finite number >= 0, got -0.5");
  EXPECT_EQ(error_of({.temperature = INFINITY}).rfind("temperature", 0), 0u);
  EXPECT_EQ(error_of({.top_k = -1}), "top_k must be >= 0 (0 disables it), got -1");
  EXPECT_EQ(error_of({.top_p = 0.0f}), "top_p must be in (0, 1], got 0");
  EXPECT_EQ(error_of({.top_p = 1.5f}), "top_p must be in (0, 1], got 1.5");
  EXPECT_EQ(error_of({.min_p = -0.1f}), "min_p must be in [0, 1], got -0.1");
  EXPECT_EQ(error_of({.min_p = 1.1f}), "min_p must be in [0, 1], got 1.1");
  EXPECT_EQ(error_of({.repetition_penalty = 0.0f}),
            "repetition_penalty must be a finite number > 0, got 0");
  EXPECT_EQ(error_of({.repetition_penalty = -1.0f}),
            "repetition_penalty must be a finite number > 0, got -1");
  EXPECT_EQ(error_of({.frequency_penalty = 2.5f}),
            "frequency_penalty must be in [-2, 2], got 2.5");
  EXPECT_EQ(error_of({.frequency_penalty = -2.5f}),
            "frequency_penalty must be in [-2, 2], got -2.5");
  EXPECT_EQ(error_of({.presence_penalty = 3.0f}), "presence_penalty must be in [-2, 2], got 3");
  EXPECT_EQ(error_of({.n_logprobs = 21}), "top_logprobs must be in [0, 20], got 21");
  EXPECT_EQ(error_of({.n_logprobs = -1}), "top_logprobs must be in [0, 20], got -1");
}

TEST(SamplingParamsTest, NanIsOutOfEveryRange) {
  EXPECT_NE(error_of({.temperature = NAN}), "");
  EXPECT_NE(error_of({.top_p = NAN}), "");
  EXPECT_NE(error_of({.min_p = NAN}), "");
  EXPECT_NE(error_of({.repetition_penalty = NAN}), "");
  EXPECT_NE(error_of({.frequency_penalty = NAN}), "");
  EXPECT_NE(error_of({.presence_penalty = NAN}), "");
}

}  // namespace
}  // namespace strata
