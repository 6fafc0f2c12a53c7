// vec_dot kernels: every weight type, scalar and AVX2, against each other and
// against double-precision references:
//   decoded:  decoded weights . decoded (quantized) activations. Both kernels
//             do this exact integer math, so only float rounding separates
//             them: bounded relative to sum |w_i a_i|.
//   float:    decoded weights . the original f32 activations. Adds the
//             activation quantization error: bounded relative to |w| |x|.
// Also: activation quantizers, unaligned weight rows, arbitrary quant bits.
#include "kernels/cpu/vec_dot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/activation_quant.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quant_rows.h"
#include "tests/kernels/dot_reference.h"

namespace strata {
namespace {

using testing::abs_dot;
using testing::ActivationRow;
using testing::dot_double;
using testing::kMatmulTypes;
using testing::make_activation_row;
using testing::make_weight_row;
using testing::norm2;
using testing::random_row;
using testing::WeightRow;

using testing::activation_error_bound;
using testing::kRoundingTolerance;

std::vector<int64_t> lengths_for(WeightType type) {
  std::vector<int64_t> lengths = {256, 512, 1024, 2304, 4096, 8192};
  const ActivationFormat format = activation_format(type);
  if (format != ActivationFormat::kQ8_K) lengths.insert(lengths.end(), {32, 64, 96, 160});
  if (format == ActivationFormat::kF32) lengths.insert(lengths.end(), {1, 3, 8, 31, 33, 100, 257});
  return lengths;
}

bool have_avx2() { return cpu_supports(CpuSimd::kAvx2); }

float run_dot(WeightType type, CpuSimd simd, int64_t n, const std::byte* w, const std::byte* a) {
  return vec_dot_kernel(type, simd)(n, w, a);
}

// Largest error ratio seen per (type, check), printed at the end to show the
// margin under each bound.
class MaxRatios {
 public:
  void note(WeightType type, const std::string& check, double ratio) {
    double& slot = max_[std::string(weight_type_name(type)) + " " + check];
    slot = std::max(slot, ratio);
  }
  ~MaxRatios() {
    for (const auto& [key, value] : max_)
      std::printf("  max error ratio %-22s %.3g\n", key.c_str(), value);
  }

 private:
  std::map<std::string, double> max_;
};

TEST(VecDotTest, AgreesWithReferences) {
  MaxRatios ratios;
  for (WeightType type : kMatmulTypes) {
    for (int64_t n : lengths_for(type)) {
      for (uint32_t seed = 0; seed < 3; ++seed) {
        SCOPED_TRACE(std::string(weight_type_name(type)) + " n=" + std::to_string(n) +
                     " seed=" + std::to_string(seed));
        const std::vector<float> w_values = random_row(static_cast<size_t>(n), 0.02f, seed);
        const std::vector<float> x = random_row(static_cast<size_t>(n), 1.0f, seed + 1000);
        const WeightRow w = make_weight_row(type, w_values);
        const ActivationRow a = make_activation_row(type, x);

        const double decoded_scale = abs_dot(w.decoded, a.decoded);
        const double decoded_ref = dot_double(w.decoded, a.decoded);
        const double float_scale = norm2(w.decoded) * norm2(x);
        const double float_ref = dot_double(w.decoded, x);

        const float scalar = run_dot(type, CpuSimd::kScalar, n, w.bytes.data(), a.bytes.data());
        EXPECT_LE(std::fabs(scalar - decoded_ref), kRoundingTolerance * decoded_scale);
        EXPECT_LE(std::fabs(scalar - float_ref), activation_error_bound(type) * float_scale);
        ratios.note(type, "scalar~decoded", std::fabs(scalar - decoded_ref) / decoded_scale);
        ratios.note(type, "scalar~float", std::fabs(scalar - float_ref) / float_scale);

        if (!have_avx2()) continue;
        const float simd = run_dot(type, CpuSimd::kAvx2, n, w.bytes.data(), a.bytes.data());
        EXPECT_LE(std::fabs(simd - scalar), kRoundingTolerance * decoded_scale);
        EXPECT_LE(std::fabs(simd - decoded_ref), kRoundingTolerance * decoded_scale);
        EXPECT_LE(std::fabs(simd - float_ref), activation_error_bound(type) * float_scale);
        ratios.note(type, "avx2~scalar", std::fabs(simd - scalar) / decoded_scale);
      }
    }
  }
}

// Rows of random bytes: every quant and scale bit pattern the format can
// hold, not just what our quantizers produce (Q8_0 -128, Q6_K scale -128,
// 6-bit scales of 63). Only the fp16 block scales are kept finite.
std::vector<std::byte> random_block_bytes(WeightType type, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> bytes(weight_bytes(type, static_cast<uint64_t>(n)).value());
  for (std::byte& b : bytes) b = static_cast<std::byte>(rng() & 0xff);
  std::uniform_real_distribution<float> scale(-0.01f, 0.01f);
  auto set_fp16 = [&](size_t offset) {
    const uint16_t bits = fp32_to_fp16(scale(rng));
    std::memcpy(bytes.data() + offset, &bits, sizeof(bits));
  };
  const size_t block_bytes = weight_type_info(type).block_bytes;
  for (size_t at = 0; at < bytes.size(); at += block_bytes) {
    switch (type) {
      case WeightType::kQ8_0:
      case WeightType::kQ4_0: set_fp16(at + offsetof(BlockQ8_0, d)); break;
      case WeightType::kQ4_K:
      case WeightType::kQ5_K:
        set_fp16(at + offsetof(BlockQ4K, d));
        set_fp16(at + offsetof(BlockQ4K, dmin));
        break;
      case WeightType::kQ6_K: set_fp16(at + offsetof(BlockQ6K, d)); break;
      default: ADD_FAILURE() << "not a block type";
    }
  }
  return bytes;
}

TEST(VecDotTest, ArbitraryQuantBits) {
  for (WeightType type : {WeightType::kQ8_0, WeightType::kQ4_0, WeightType::kQ4_K,
                          WeightType::kQ5_K, WeightType::kQ6_K}) {
    for (uint32_t seed = 0; seed < 20; ++seed) {
      SCOPED_TRACE(std::string(weight_type_name(type)) + " seed=" + std::to_string(seed));
      constexpr int64_t n = 1024;
      const std::vector<std::byte> w = random_block_bytes(type, n, seed);
      std::vector<float> w_decoded(n);
      dequantize(type, w, w_decoded);
      const std::vector<float> x = random_row(n, 1.0f, seed + 7);
      const ActivationRow a = make_activation_row(type, x);
      const double scale = abs_dot(w_decoded, a.decoded);
      const double ref = dot_double(w_decoded, a.decoded);
      const float scalar = run_dot(type, CpuSimd::kScalar, n, w.data(), a.bytes.data());
      EXPECT_LE(std::fabs(scalar - ref), kRoundingTolerance * scale);
      if (have_avx2()) {
        const float simd = run_dot(type, CpuSimd::kAvx2, n, w.data(), a.bytes.data());
        EXPECT_LE(std::fabs(simd - scalar), kRoundingTolerance * scale);
      }
    }
  }
}

// GGUF rows need not be aligned: the same row at every offset mod 8 gives the
// same bits.
TEST(VecDotTest, UnalignedWeightRows) {
  for (WeightType type : kMatmulTypes) {
    constexpr int64_t n = 512;
    const WeightRow w = make_weight_row(type, random_row(n, 0.02f, 3));
    const ActivationRow a = make_activation_row(type, random_row(n, 1.0f, 4));
    for (CpuSimd simd : {CpuSimd::kScalar, CpuSimd::kAvx2}) {
      if (!cpu_supports(simd)) continue;
      const float aligned = run_dot(type, simd, n, w.bytes.data(), a.bytes.data());
      for (size_t offset = 1; offset < 8; ++offset) {
        std::vector<std::byte> shifted(w.bytes.size() + offset);
        std::memcpy(shifted.data() + offset, w.bytes.data(), w.bytes.size());
        EXPECT_EQ(run_dot(type, simd, n, shifted.data() + offset, a.bytes.data()), aligned)
            << weight_type_name(type) << " " << cpu_simd_name(simd) << " offset " << offset;
      }
    }
  }
}

TEST(VecDotTest, ZeroActivationsGiveZero) {
  for (WeightType type : kMatmulTypes) {
    constexpr int64_t n = 512;
    const WeightRow w = make_weight_row(type, random_row(n, 0.02f, 5));
    const ActivationRow a = make_activation_row(type, std::vector<float>(n, 0.0f));
    for (CpuSimd simd : {CpuSimd::kScalar, CpuSimd::kAvx2}) {
      if (!cpu_supports(simd)) continue;
      EXPECT_EQ(run_dot(type, simd, n, w.bytes.data(), a.bytes.data()), 0.0f)
          << weight_type_name(type) << " " << cpu_simd_name(simd);
    }
  }
}

TEST(VecDotTest, UnsupportedTypeAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(vec_dot_kernel(WeightType::kQ4_1, CpuSimd::kScalar), "no CPU dot product");
}

TEST(ActivationQuantTest, Q8_0MatchesTheReferenceQuantizer) {
  // Random data, plus exact halves (127 sets the scale to 1, so x * (1 / d)
  // lands on .5 exactly): the reference rounds them away from zero.
  std::vector<float> x = random_row(32 * 64, 1.0f, 11);
  for (int i = 0; i < 32; ++i)
    x[i] = i == 0 ? 127.0f : (static_cast<float>(i) - 16.0f) * 4.0f + 0.5f;
  std::vector<BlockQ8_0> fast(64), reference(64);
  quantize_activations_q8_0(x, fast);
  quantize_q8_0(x, reference);
  EXPECT_EQ(std::memcmp(fast.data(), reference.data(), sizeof(BlockQ8_0) * 64), 0);
  EXPECT_EQ(fast[0].qs[1], static_cast<int8_t>(std::round((1.0f - 16.0f) * 4.0f + 0.5f)));
}

TEST(ActivationQuantTest, Q8_KScalesSumsAndRange) {
  std::vector<float> x = random_row(256 * 8, 1.0f, 12);
  x[300] = -50.0f;  // block 1's largest magnitude, negative
  std::vector<BlockQ8K> blocks(8);
  quantize_activations_q8_k(x, blocks);
  for (size_t b = 0; b < blocks.size(); ++b) {
    const BlockQ8K& block = blocks[b];
    float amax = 0;
    for (int i = 0; i < 256; ++i) amax = std::max(amax, std::fabs(x[256 * b + i]));
    EXPECT_FLOAT_EQ(std::fabs(block.d), amax / 127.0f);
    for (int i = 0; i < 256; ++i) {
      EXPECT_GE(block.qs[i], -127);
      EXPECT_LE(std::fabs(block.d * block.qs[i] - x[256 * b + i]), std::fabs(block.d) * 0.5001f);
    }
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += block.qs[16 * g + i];
      EXPECT_EQ(block.bsums[g], sum);
    }
  }
  EXPECT_EQ(blocks[1].qs[300 - 256], -127);  // the largest magnitude maps to -127
}

}  // namespace
}  // namespace strata
