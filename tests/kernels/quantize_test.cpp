// quantize() then dequantize(): known answers for the reference quantizers,
// error bounds on seeded random data, and edge cases (zeros, constants, an
// outlier) for every supported type.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quantize.h"

namespace strata {
namespace {

constexpr WeightType kAllTypes[] = {WeightType::kF32,  WeightType::kF16,  WeightType::kBF16,
                                    WeightType::kQ8_0, WeightType::kQ4_0, WeightType::kQ4_K,
                                    WeightType::kQ5_K, WeightType::kQ6_K};
constexpr size_t kElems = 256 * 256;  // a multiple of every block size

std::vector<float> round_trip(WeightType type, const std::vector<float>& values) {
  const std::vector<std::byte> bytes = quantize(type, values);
  EXPECT_EQ(bytes.size(), weight_bytes(type, values.size()).value());
  std::vector<float> out(values.size());
  dequantize(type, bytes, out);
  return out;
}

double rms(std::span<const float> x) {
  double sum = 0;
  for (float v : x) sum += static_cast<double>(v) * v;
  return std::sqrt(sum / static_cast<double>(x.size()));
}

// RMS of the error relative to the RMS of the data.
double relative_rmse(std::span<const float> original, std::span<const float> decoded) {
  double sum = 0;
  for (size_t i = 0; i < original.size(); ++i) {
    const double diff = static_cast<double>(decoded[i]) - original[i];
    sum += diff * diff;
  }
  return std::sqrt(sum / static_cast<double>(original.size())) / rms(original);
}

std::vector<float> normal_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 0.02f);  // typical weight scale
  std::vector<float> values(n);
  for (float& v : values) v = dist(rng);
  return values;
}

std::vector<float> uniform_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(n);
  for (float& v : values) v = dist(rng);
  return values;
}

// ---- known answers: ggml's reference quantizers ----------------------------

TEST(QuantizeQ8_0, RoundsHalvesAwayFromZero) {
  // amax = 127 gives d = 1 exactly, so q = round(x).
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;
  x[1] = -3.5f;   // -4 (away from zero)
  x[2] = 2.5f;    // 3
  x[3] = -0.49f;  // -0
  x[4] = 100.4f;  // 100
  x[5] = -127.0f;
  const std::vector<std::byte> bytes = quantize(WeightType::kQ8_0, x);
  BlockQ8_0 block;
  std::memcpy(&block, bytes.data(), sizeof(block));
  EXPECT_EQ(block.d, 0x3c00);  // 1.0
  const int8_t expected[] = {127, -4, 3, 0, 100, -127};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(block.qs[i], expected[i]) << i;
  for (int i = 6; i < 32; ++i) EXPECT_EQ(block.qs[i], 0) << i;
}

TEST(QuantizeQ4_0, LargestMagnitudeMapsToMinus8) {
  // Largest magnitude is -8 (signed): d = -8 / -8 = 1, level = trunc(x + 8.5), capped at 15.
  std::vector<float> x(32, 0.0f);
  x[0] = -8.0f;   // level 0
  x[1] = 7.4f;    // trunc(15.9) = 15
  x[2] = 7.6f;    // trunc(16.1) = 16 -> capped 15
  x[3] = 0.49f;   // trunc(8.99) = 8
  x[4] = 0.5f;    // trunc(9.0) = 9 (halves go up)
  x[5] = -0.5f;   // trunc(8.0) = 8
  x[16] = -1.0f;  // high nibble of byte 0: 7
  const std::vector<std::byte> bytes = quantize(WeightType::kQ4_0, x);
  BlockQ4_0 block;
  std::memcpy(&block, bytes.data(), sizeof(block));
  EXPECT_EQ(block.d, 0x3c00);  // 1.0
  EXPECT_EQ(block.qs[0], 0x70);
  EXPECT_EQ(block.qs[1], 0x8f);  // element 17 is 0 -> level 8
  EXPECT_EQ(block.qs[2], 0x8f);
  EXPECT_EQ(block.qs[3], 0x88);
  EXPECT_EQ(block.qs[4], 0x89);
  EXPECT_EQ(block.qs[5], 0x88);

  // Largest magnitude positive: d = 8 / -8 = -1, so +8 is level 0 and decodes exactly.
  std::vector<float> y(32, 0.0f);
  y[7] = 8.0f;
  y[8] = -2.0f;
  const std::vector<float> decoded = round_trip(WeightType::kQ4_0, y);
  EXPECT_EQ(decoded[7], 8.0f);
  EXPECT_EQ(decoded[8], -2.0f);
}

// Values on a format's grid come back exactly.
TEST(Quantize, ValuesOnTheGridAreExact) {
  std::vector<float> q8(64), q4(64);
  for (int i = 0; i < 64; ++i) {
    q8[i] = 0.125f * static_cast<float>((i * 11) % 255 - 127);  // d = 0.125 once +-127 is present
    q4[i] = -0.25f * static_cast<float>((i * 5) % 16 - 8);       // d = -0.25 (2 present as the max)
  }
  q8[0] = 0.125f * 127;
  q8[32] = -0.125f * 127;
  q4[0] = 2.0f;
  q4[32] = 2.0f;
  EXPECT_EQ(round_trip(WeightType::kQ8_0, q8), q8);
  EXPECT_EQ(round_trip(WeightType::kQ4_0, q4), q4);
}

// ---- round trips on random data -------------------------------------------

struct ErrorBound {
  WeightType type;
  double normal;   // bound on relative RMSE, normal data
  double uniform;  // bound on relative RMSE, uniform data
};

// Bounds are ~1.25x the errors measured with these seeds (N(0, 0.02) and
// U(-1, 1), 65536 values each):
//   type   normal   uniform
//   f32    0        0
//   f16    0.00021  0.00018   (fp16 rounding alone: ~2^-12 relative)
//   bf16   0.00165  0.00148
//   q8_0   0.00536  0.00376
//   q6_k   0.0178   0.0133
//   q5_k   0.0363   0.0279
//   q4_k   0.0719   0.0554
//   q4_0   0.0863   0.0651
// For scale: uniform rounding with step s has RMS error s / sqrt(12); Q4_0's
// step is ~1/15 of a 32-value block's range (~4.2 sigma), so ~0.08 sigma.
constexpr ErrorBound kBounds[] = {
    {WeightType::kF32, 0.0, 0.0},         {WeightType::kF16, 0.0003, 0.00025},
    {WeightType::kBF16, 0.0021, 0.0019},  {WeightType::kQ8_0, 0.0067, 0.0047},
    {WeightType::kQ6_K, 0.022, 0.017},    {WeightType::kQ5_K, 0.045, 0.035},
    {WeightType::kQ4_K, 0.09, 0.069},     {WeightType::kQ4_0, 0.108, 0.081},
};

TEST(QuantizeRoundTrip, NormalAndUniformDataWithinBounds) {
  const std::vector<float> normal = normal_values(kElems, 1234);
  const std::vector<float> uniform = uniform_values(kElems, 5678);
  for (const ErrorBound& bound : kBounds) {
    const double normal_error = relative_rmse(normal, round_trip(bound.type, normal));
    const double uniform_error = relative_rmse(uniform, round_trip(bound.type, uniform));
    std::printf("%-5s normal %.5f uniform %.5f\n",
                std::string(weight_type_name(bound.type)).c_str(), normal_error, uniform_error);
    EXPECT_LE(normal_error, bound.normal) << weight_type_name(bound.type);
    EXPECT_LE(uniform_error, bound.uniform) << weight_type_name(bound.type);
  }
}

TEST(QuantizeRoundTrip, FinerTypesAreMoreAccurate) {
  const std::vector<float> normal = normal_values(kElems, 42);
  auto error = [&](WeightType type) { return relative_rmse(normal, round_trip(type, normal)); };
  EXPECT_LT(error(WeightType::kQ8_0), error(WeightType::kQ6_K));
  EXPECT_LT(error(WeightType::kQ6_K), error(WeightType::kQ5_K));
  EXPECT_LT(error(WeightType::kQ5_K), error(WeightType::kQ4_K));
  EXPECT_LT(error(WeightType::kQ4_K), error(WeightType::kQ4_0));
}

TEST(QuantizeRoundTrip, Deterministic) {
  const std::vector<float> values = normal_values(4096, 7);
  for (WeightType type : kAllTypes)
    EXPECT_EQ(quantize(type, values), quantize(type, values)) << weight_type_name(type);
}

// ---- edge cases ---------------------------------------------------------------

TEST(QuantizeEdge, AllZeroDecodesToZero) {
  const std::vector<float> zeros(1024, 0.0f);
  for (WeightType type : kAllTypes) {
    const std::vector<float> decoded = round_trip(type, zeros);
    for (size_t i = 0; i < decoded.size(); ++i)
      ASSERT_EQ(decoded[i], 0.0f) << weight_type_name(type) << " " << i;
  }
}

TEST(QuantizeEdge, ConstantBlocks) {
  for (float c : {0.3f, -0.3f, 1e-3f, -7.0f}) {
    const std::vector<float> constant(512, c);
    for (WeightType type : kAllTypes) {
      const std::vector<float> decoded = round_trip(type, constant);
      for (size_t i = 0; i < decoded.size(); ++i) {
        // fp16 scales and 6-bit sub-scales: within 0.4% of the constant, or
        // 3e-5 where a K-quant's fp16 super-scale (c / 15 / 63 for Q4_K) falls
        // into fp16's subnormal range (below 6.1e-5) and keeps fewer bits.
        ASSERT_NEAR(decoded[i], c, std::max(std::fabs(c) * 0.004f, 3e-5f))
            << weight_type_name(type) << " c=" << c << " i=" << i;
      }
    }
  }
}

// One huge value: it is kept accurately, and blocks that do not contain it
// are unaffected (a block's scale is local to the block).
TEST(QuantizeEdge, SingleHugeOutlier) {
  std::vector<float> values = normal_values(4096, 99);
  constexpr size_t kOutlier = 1000;  // in super-block 3, 32-block 31
  values[kOutlier] = 50.0f;          // 2500 sigma
  for (WeightType type : kAllTypes) {
    const std::vector<float> decoded = round_trip(type, values);
    EXPECT_NEAR(decoded[kOutlier], 50.0f, 50.0f * 0.04f) << weight_type_name(type);
    // Data outside the outlier's block keeps the bound of normal data.
    const size_t block = weight_type_info(type).block_elems;
    const size_t first = kOutlier / block * block, last = first + block;
    std::vector<float> kept_in, kept_out;
    for (size_t i = 0; i < values.size(); ++i) {
      if (i >= first && i < last) continue;
      kept_in.push_back(values[i]);
      kept_out.push_back(decoded[i]);
    }
    for (const ErrorBound& bound : kBounds) {
      if (bound.type == type) {
        EXPECT_LE(relative_rmse(kept_in, kept_out), bound.normal) << weight_type_name(type);
      }
    }
  }
}

TEST(QuantizeEdge, TinyAndLargeMagnitudes) {
  // Scales stay representable in fp16: data of RMS 1e-3 and 100 keep the usual relative error.
  for (float scale : {0.05f, 5000.0f}) {
    std::vector<float> values = normal_values(kElems / 4, 3);
    for (float& v : values) v *= scale;
    for (const ErrorBound& bound : kBounds) {
      EXPECT_LE(relative_rmse(values, round_trip(bound.type, values)), bound.normal)
          << weight_type_name(bound.type) << " scale " << scale;
    }
  }
}

TEST(QuantizeDeathTest, PartialBlockIsABug) {
  const std::vector<float> values(100, 1.0f);
  EXPECT_DEATH(quantize(WeightType::kQ4_K, values), "");
  EXPECT_DEATH(quantize(WeightType::kQ4_1, std::vector<float>(32, 1.0f)), "");
}

}  // namespace
}  // namespace strata
