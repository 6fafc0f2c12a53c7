// Activation quantizers (Q8_0, Q8_K) and the activation format table.
// Compiled at -O3 in optimized builds (kernels/cpu/CMakeLists.txt): the loops
// are written for the auto-vectorizer, which GCC's -O2 cost model rejects.
#include "kernels/cpu/activation_quant.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "common/check.h"
#include "kernels/fp16.h"

namespace strata {
namespace {

// Round half away from zero, exactly std::round for |v| < 2^23, in integer
// steps the vectorizer handles (std::round is a library call at -O2 on
// baseline x86-64). v - trunc(v) is exact in that range.
inline int round_half_away(float v) {
  const int truncated = static_cast<int>(v);
  const float rest = v - static_cast<float>(truncated);
  return truncated + (rest >= 0.5f ? 1 : 0) - (rest <= -0.5f ? 1 : 0);
}

// Round half to even for |v| <= 2^22: adding 1.5 * 2^23 leaves the rounded
// integer in the low mantissa bits (ggml's nearest_int).
inline int round_half_even(float v) {
  const float shifted = v + 12582912.0f;
  return static_cast<int>(std::bit_cast<uint32_t>(shifted) & 0x7fffffu) - 0x400000;
}

void quantize_block_q8_0(const float* __restrict x, BlockQ8_0* __restrict out) {
  float amax = 0.0f;
  for (int i = 0; i < kBlockElems0; ++i) amax = std::max(amax, std::fabs(x[i]));
  // As ggml's reference: the quants use the unrounded scale; the block stores
  // it rounded to fp16.
  const float d = amax / 127.0f;
  const float inv_d = d != 0.0f ? 1.0f / d : 0.0f;
  out->d = fp32_to_fp16(d);
  int8_t qs[kBlockElems0];
  for (int i = 0; i < kBlockElems0; ++i) qs[i] = static_cast<int8_t>(round_half_away(x[i] * inv_d));
  std::memcpy(out->qs, qs, sizeof(qs));
}

void quantize_block_q8_k(const float* __restrict x, BlockQ8K* __restrict out) {
  // The signed value of largest magnitude (the first one on ties).
  float amax = 0.0f, max = 0.0f;
  for (int i = 0; i < kBlockElemsK; ++i) {
    const float magnitude = std::fabs(x[i]);
    if (magnitude > amax) {
      amax = magnitude;
      max = x[i];
    }
  }
  if (amax == 0.0f) {
    std::memset(out, 0, sizeof(*out));
    return;
  }
  // Negative scale: `max` maps to exactly -127 whatever its sign, so every
  // quant lands in -127..127 (the cap only guards rounding at +127).
  const float inv_d = -127.0f / max;
  for (int i = 0; i < kBlockElemsK; ++i) {
    out->qs[i] = static_cast<int8_t>(std::min(127, round_half_even(inv_d * x[i])));
  }
  for (int g = 0; g < kBlockElemsK / 16; ++g) {
    int sum = 0;
    for (int i = 0; i < 16; ++i) sum += out->qs[16 * g + i];
    out->bsums[g] = static_cast<int16_t>(sum);
  }
  out->d = 1.0f / inv_d;
}

}  // namespace

ActivationFormat activation_format(WeightType weight_type) {
  switch (weight_type) {
    case WeightType::kF32:
    case WeightType::kF16:
    case WeightType::kBF16: return ActivationFormat::kF32;
    case WeightType::kQ8_0:
    case WeightType::kQ4_0: return ActivationFormat::kQ8_0;
    case WeightType::kQ4_K:
    case WeightType::kQ5_K:
    case WeightType::kQ6_K: return ActivationFormat::kQ8_K;
    default: break;
  }
  STRATA_CHECK(false, "no CPU dot product for weight type ", weight_type_name(weight_type));
  return ActivationFormat::kF32;
}

int64_t activation_block_elems(ActivationFormat format) {
  switch (format) {
    case ActivationFormat::kF32: return 1;
    case ActivationFormat::kQ8_0: return kBlockElems0;
    case ActivationFormat::kQ8_K: return kBlockElemsK;
  }
  STRATA_CHECK(false, "bad activation format");
  return 1;
}

size_t activation_row_bytes(ActivationFormat format, int64_t row_length) {
  const int64_t block_elems = activation_block_elems(format);
  STRATA_CHECK(row_length >= 0 && row_length % block_elems == 0, "row of ", row_length,
               " elements is not a whole number of ", block_elems, "-element blocks");
  const auto n_blocks = static_cast<size_t>(row_length / block_elems);
  switch (format) {
    case ActivationFormat::kF32: return n_blocks * sizeof(float);
    case ActivationFormat::kQ8_0: return n_blocks * sizeof(BlockQ8_0);
    case ActivationFormat::kQ8_K: return n_blocks * sizeof(BlockQ8K);
  }
  return 0;
}

void quantize_activations_q8_0(std::span<const float> values, std::span<BlockQ8_0> blocks) {
  STRATA_CHECK(values.size() == blocks.size() * kBlockElems0, values.size(), " values into ",
               blocks.size(), " Q8_0 blocks");
  for (size_t b = 0; b < blocks.size(); ++b) {
    quantize_block_q8_0(values.data() + kBlockElems0 * b, &blocks[b]);
  }
}

void quantize_activations_q8_k(std::span<const float> values, std::span<BlockQ8K> blocks) {
  STRATA_CHECK(values.size() == blocks.size() * kBlockElemsK, values.size(), " values into ",
               blocks.size(), " Q8_K blocks");
  for (size_t b = 0; b < blocks.size(); ++b) {
    quantize_block_q8_k(values.data() + kBlockElemsK * b, &blocks[b]);
  }
}

void quantize_activation_row(ActivationFormat format, std::span<const float> x,
                             std::span<std::byte> out) {
  STRATA_CHECK(out.size() == activation_row_bytes(format, static_cast<int64_t>(x.size())),
               out.size(), " bytes for a row of ", x.size());
  switch (format) {
    case ActivationFormat::kQ8_0:
      quantize_activations_q8_0(x, as_blocks<BlockQ8_0>(out));
      return;
    case ActivationFormat::kQ8_K: {
      STRATA_CHECK(reinterpret_cast<uintptr_t>(out.data()) % alignof(BlockQ8K) == 0,
                   "Q8_K activations must be 4-byte aligned");
      quantize_activations_q8_k(x, as_blocks<BlockQ8K>(out));
      return;
    }
    case ActivationFormat::kF32: break;
  }
  STRATA_CHECK(false, "f32 activations are used as they are, not converted");
}

}  // namespace strata
