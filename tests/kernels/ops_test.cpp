#include "kernels/cpu/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace strata {
namespace {

TEST(OpsTest, RmsNormMatchesHandComputedValues) {
  // Row 1: mean square of (1, 2, 3, 4) = 7.5. Row 2: (3, 4) repeated: 12.5.
  std::vector<float> x = {1, 2, 3, 4, 3, -4, 3, -4};
  std::vector<float> weight = {1, 2, 1, 0.5f};
  std::vector<float> out(8);
  rms_norm(x, weight, 0.0f, out);
  const float r1 = 1.0f / std::sqrt(7.5f);
  const float r2 = 1.0f / std::sqrt(12.5f);
  std::vector<float> want = {1 * r1, 4 * r1, 3 * r1, 2 * r1, 3 * r2, -8 * r2, 3 * r2, -2 * r2};
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(out[i], want[i], 1e-6f) << i;

  // eps is added to the mean square; the output may alias the input.
  std::vector<float> y = {0, 0, 0, 0};
  rms_norm(y, weight, 1e-6f, y);
  for (float v : y) EXPECT_EQ(v, 0.0f);
  std::vector<float> z = {2, 2};
  rms_norm(z, std::vector<float>{1, 1}, 5.0f, z);  // 2 / sqrt(4 + 5)
  EXPECT_NEAR(z[0], 2.0f / 3.0f, 1e-6f);
}

TEST(OpsTest, RopeInverseFrequenciesWithAndWithoutFactors) {
  std::vector<float> plain = rope_inv_freqs(8, 10000.0f, {});
  ASSERT_EQ(plain.size(), 4u);
  EXPECT_FLOAT_EQ(plain[0], 1.0f);
  EXPECT_FLOAT_EQ(plain[1], 0.1f);    // 10000^(-2/8)
  EXPECT_FLOAT_EQ(plain[2], 0.01f);   // 10000^(-4/8)
  EXPECT_FLOAT_EQ(plain[3], 0.001f);  // 10000^(-6/8)
  std::vector<float> factors = {1, 2, 4, 8};
  std::vector<float> scaled = rope_inv_freqs(8, 10000.0f, factors);
  EXPECT_FLOAT_EQ(scaled[1], 0.05f);
  EXPECT_FLOAT_EQ(scaled[3], 0.000125f);
}

// One head of 4: pairs are (0,1),(2,3) for normal and (0,2),(1,3) for NeoX.
TEST(OpsTest, RopeNormalAndNeoxRotateDifferentPairs) {
  // Angles: pair 0 turns by 90 degrees, pair 1 by 180 degrees.
  const float pi = 3.14159265358979f;
  std::vector<float> cos = {std::cos(pi / 2), std::cos(pi)};
  std::vector<float> sin = {std::sin(pi / 2), std::sin(pi)};
  const std::vector<float> x = {1, 2, 3, 4};

  std::vector<float> normal = x;
  rope(normal, cos, sin, RopeStyle::kNormal);
  // (1,2) by 90: (-2, 1). (3,4) by 180: (-3, -4).
  std::vector<float> want_normal = {-2, 1, -3, -4};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(normal[i], want_normal[i], 1e-6f) << i;

  std::vector<float> neox = x;
  rope(neox, cos, sin, RopeStyle::kNeox);
  // (x0, x2) = (1,3) by 90: (-3, 1). (x1, x3) = (2,4) by 180: (-2, -4).
  std::vector<float> want_neox = {-3, -2, 1, -4};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(neox[i], want_neox[i], 1e-6f) << i;
}

TEST(OpsTest, RopeAppliesToEveryHeadAndPreservesNorms) {
  std::vector<float> inv = rope_inv_freqs(8, 10000.0f, {});
  std::vector<float> cos(4), sin(4);
  rope_cos_sin(7, inv, cos, sin);
  EXPECT_FLOAT_EQ(cos[0], std::cos(7.0f));
  EXPECT_FLOAT_EQ(sin[1], std::sin(0.7f));
  std::vector<float> x(24);  // three heads of 8
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 8) - 3.5f;
  std::vector<float> y = x;
  rope(y, cos, sin, RopeStyle::kNeox);
  for (size_t h = 0; h < 3; ++h) {
    for (size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(y[h * 8 + i], y[i]);  // identical heads
    float before = 0, after = 0;
    for (size_t i = 0; i < 8; ++i) {
      before += x[h * 8 + i] * x[h * 8 + i];
      after += y[h * 8 + i] * y[h * 8 + i];
    }
    EXPECT_NEAR(after, before, 1e-4f);
  }
  // Position 0 is the identity.
  rope_cos_sin(0, inv, cos, sin);
  std::vector<float> same = x;
  rope(same, cos, sin, RopeStyle::kNormal);
  EXPECT_EQ(same, x);
}

TEST(OpsTest, SiluMul) {
  std::vector<float> gate = {0.0f, 1.0f, -2.0f, 20.0f};
  std::vector<float> up = {5.0f, 2.0f, 1.0f, 0.5f};
  std::vector<float> out(4);
  silu_mul(gate, up, out);
  EXPECT_FLOAT_EQ(out[0], 0.0f);
  EXPECT_NEAR(out[1], 2.0f / (1.0f + std::exp(-1.0f)), 1e-6f);
  EXPECT_NEAR(out[2], -2.0f / (1.0f + std::exp(2.0f)), 1e-6f);
  EXPECT_NEAR(out[3], 10.0f, 1e-5f);
}

TEST(OpsTest, SoftmaxIsStableForLargeValues) {
  std::vector<float> x = {1000.0f, 1001.0f, 1002.0f, -1e30f};
  softmax(x);
  const float e0 = std::exp(-2.0f), e1 = std::exp(-1.0f);
  const float sum = e0 + e1 + 1.0f;
  EXPECT_NEAR(x[0], e0 / sum, 1e-6f);
  EXPECT_NEAR(x[1], e1 / sum, 1e-6f);
  EXPECT_NEAR(x[2], 1.0f / sum, 1e-6f);
  EXPECT_EQ(x[3], 0.0f);
  std::vector<float> single = {-5e37f};
  softmax(single);
  EXPECT_EQ(single[0], 1.0f);
}

TEST(OpsTest, AddInPlace) {
  std::vector<float> acc = {1, 2, 3};
  add_in_place(acc, std::vector<float>{0.5f, -2, 4});
  EXPECT_EQ(acc, (std::vector<float>{1.5f, 0, 7}));
}

}  // namespace
}  // namespace strata
