// Test data and double-precision references for the vec_dot and matmul tests:
// seeded random rows, weight rows quantized and decoded back, activation rows
// converted and decoded back.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "kernels/cpu/activation_quant.h"
#include "kernels/cpu/quantize.h"
#include "kernels/fp16.h"
#include "kernels/weight_type.h"

namespace strata::testing {

inline constexpr WeightType kMatmulTypes[] = {
    WeightType::kF32,  WeightType::kF16,  WeightType::kBF16, WeightType::kQ8_0,
    WeightType::kQ4_0, WeightType::kQ4_K, WeightType::kQ5_K, WeightType::kQ6_K};

// Normal(0, sigma) values, with every 97th value 8x larger: real activations
// have outlier channels, which stretch the 8-bit scales.
inline std::vector<float> random_row(size_t n, float sigma, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = normal(rng) * (i % 97 == 5 ? 8.0f : 1.0f);
  return values;
}

// A row of `type` holding `values`, and the floats it decodes to.
struct WeightRow {
  std::vector<std::byte> bytes;
  std::vector<float> decoded;
};

inline WeightRow make_weight_row(WeightType type, std::span<const float> values) {
  WeightRow row{quantize(type, values), std::vector<float>(values.size())};
  dequantize(type, row.bytes, row.decoded);
  return row;
}

// An activation row as vec_dot takes it, and the floats it stands for.
struct ActivationRow {
  std::vector<std::byte> bytes;  // activation_row_bytes(format, n); operator new aligns it
  std::vector<float> decoded;
};

inline ActivationRow make_activation_row(WeightType weight_type, std::span<const float> x) {
  const ActivationFormat format = activation_format(weight_type);
  const auto n = static_cast<int64_t>(x.size());
  ActivationRow row{std::vector<std::byte>(activation_row_bytes(format, n)),
                    std::vector<float>(x.begin(), x.end())};
  if (format == ActivationFormat::kF32) {
    std::memcpy(row.bytes.data(), x.data(), x.size_bytes());
    return row;
  }
  quantize_activation_row(format, x, row.bytes);
  if (format == ActivationFormat::kQ8_0) {
    const std::span<const BlockQ8_0> blocks =
        as_blocks<BlockQ8_0>(std::span<const std::byte>(row.bytes));
    for (size_t i = 0; i < x.size(); ++i) {
      const BlockQ8_0& block = blocks[i / kBlockElems0];
      row.decoded[i] = fp16_to_fp32(block.d) * block.qs[i % kBlockElems0];
    }
  } else {
    const auto* blocks = reinterpret_cast<const BlockQ8K*>(row.bytes.data());
    for (size_t i = 0; i < x.size(); ++i) {
      const BlockQ8K& block = blocks[i / kBlockElemsK];
      row.decoded[i] = block.d * block.qs[i % kBlockElemsK];
    }
  }
  return row;
}

inline double dot_double(std::span<const float> a, std::span<const float> b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

// sum |a_i * b_i|: the scale of a dot product's rounding error.
inline double abs_dot(std::span<const float> a, std::span<const float> b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += std::fabs(static_cast<double>(a[i]) * b[i]);
  return sum;
}

inline double norm2(std::span<const float> a) { return std::sqrt(dot_double(a, a)); }

// Scalar vs SIMD, and either vs decoded weights . decoded activations: the
// same integer math, only float rounding and summation order differ.
// Relative to sum |w_i a_i|; measured at most 2.8e-7 (f16).
inline constexpr double kRoundingTolerance = 2e-6;

// |result - decoded weights . f32 x| / (|w| |x|): the activation quantization
// error. Measured maxima on vec_dot_test's data (f32 / f16 / bf16: 1.8e-7,
// pure rounding; Q8_0 activations: 1.05e-3; Q8_K: 2.05e-3, one scale per 256
// elements stretched by the outliers), bounds set with ~2.5x margin.
inline double activation_error_bound(WeightType type) {
  switch (activation_format(type)) {
    case ActivationFormat::kF32: return 1e-5;
    case ActivationFormat::kQ8_0: return 3e-3;
    case ActivationFormat::kQ8_K: return 5e-3;
  }
  return 0;
}

}  // namespace strata::testing
