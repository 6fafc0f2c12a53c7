// Encoders of the K-quant super-block types (256 elements).
//
// Q4_K / Q5_K: each 32-element sub-block gets its own (scale, min) from a
// weighted affine fit (weights |x| + rms of the sub-block, as ggml's reference
// quantizer uses, so large values count more); the 8 scales and 8 mins are
// then coded as 6-bit multiples of two fp16 super-scales, and every element is
// re-rounded against the scale and min it will actually be decoded with.
// Q6_K: each 16-element sub-block gets a symmetric scale, coded as int8 times
// an fp16 super-scale, and elements are re-rounded the same way.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "common/check.h"
#include "kernels/cpu/k_quant_fit.h"
#include "kernels/cpu/quant_rows.h"
#include "kernels/fp16.h"

namespace strata {
namespace {

constexpr int kSubBlocksK4 = 8;  // Q4_K / Q5_K: 8 sub-blocks of 32
constexpr int kSubElemsK4 = kBlockElemsK / kSubBlocksK4;
constexpr int kSubBlocksQ6 = 16;  // Q6_K: 16 sub-blocks of 16
constexpr int kSubElemsQ6 = kBlockElemsK / kSubBlocksQ6;

void check_sizes(size_t n_values, size_t n_blocks) {
  STRATA_CHECK(n_values == n_blocks * kBlockElemsK, n_values, " values into ", n_blocks,
               " blocks of ", kBlockElemsK);
}

// One Q4_K / Q5_K super-block before bit packing.
struct AffineSuperBlock {
  uint16_t d;                                  // fp16 scale of the 6-bit scales
  uint16_t dmin;                               // fp16 scale of the 6-bit mins
  std::array<uint8_t, kScaleBytesK4> scales;  // packed as the block stores them
  std::array<uint8_t, kBlockElemsK> levels;   // 0..q_max, in element order
};

AffineSuperBlock quantize_affine_super_block(const float* x, int q_max, ScaleGrid grid) {
  std::array<AffineFit, kSubBlocksK4> fits;
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < kSubBlocksK4; ++j) {
    const float* sub = x + kSubElemsK4 * j;
    float sum_x2 = 0;
    for (int l = 0; l < kSubElemsK4; ++l) sum_x2 += sub[l] * sub[l];
    const float rms = std::sqrt(sum_x2 / kSubElemsK4);
    float weights[kSubElemsK4];
    for (int l = 0; l < kSubElemsK4; ++l) weights[l] = rms + std::fabs(sub[l]);
    fits[j] = fit_affine_levels({sub, kSubElemsK4}, weights, q_max, grid);
    max_scale = std::max(max_scale, fits[j].scale);
    max_min = std::max(max_min, fits[j].min);
  }

  // Code each scale and min as a 6-bit multiple of max / 63.
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  std::array<ScaleMin6, kSubBlocksK4> coded;
  for (int j = 0; j < kSubBlocksK4; ++j) {
    coded[j] = {static_cast<uint8_t>(std::clamp(nearest_int(inv_scale * fits[j].scale), 0, 63)),
                static_cast<uint8_t>(std::clamp(nearest_int(inv_min * fits[j].min), 0, 63))};
  }

  AffineSuperBlock out;
  out.d = fp32_to_fp16(max_scale / 63.0f);
  out.dmin = fp32_to_fp16(max_min / 63.0f);
  out.scales = pack_k4_scales_mins(coded);

  // Re-round every element against the scale and min the decoder will use.
  const float d = fp16_to_fp32(out.d);
  const float dmin = fp16_to_fp32(out.dmin);
  for (int j = 0; j < kSubBlocksK4; ++j) {
    const float step = d * coded[j].scale;
    const float min = dmin * coded[j].min;
    for (int l = 0; l < kSubElemsK4; ++l) {
      const int e = kSubElemsK4 * j + l;
      // A zero step decodes every level to -min; level 0 is as good as any.
      out.levels[e] =
          step == 0.0f
              ? 0
              : static_cast<uint8_t>(std::clamp(nearest_int((x[e] + min) / step), 0, q_max));
    }
  }
  return out;
}

}  // namespace

void quantize_q4_k(std::span<const float> values, std::span<BlockQ4K> blocks) {
  check_sizes(values.size(), blocks.size());
  // Grid as ggml's quantize_row_q4_K_ref: 21 candidates from 14 to 16 levels.
  constexpr ScaleGrid kGrid{.first = -1.0f, .step = 0.1f, .n_steps = 20};
  for (size_t b = 0; b < blocks.size(); ++b) {
    const AffineSuperBlock sb =
        quantize_affine_super_block(values.data() + kBlockElemsK * b, 15, kGrid);
    BlockQ4K& block = blocks[b];
    block.d = sb.d;
    block.dmin = sb.dmin;
    std::memcpy(block.scales, sb.scales.data(), kScaleBytesK4);
    for (int chunk = 0; chunk < 4; ++chunk) {  // 64 elements per 32 bytes
      for (int l = 0; l < 32; ++l) {
        block.qs[32 * chunk + l] =
            static_cast<uint8_t>(sb.levels[64 * chunk + l] | (sb.levels[64 * chunk + 32 + l] << 4));
      }
    }
  }
}

void quantize_q5_k(std::span<const float> values, std::span<BlockQ5K> blocks) {
  check_sizes(values.size(), blocks.size());
  // Grid as ggml's quantize_row_q5_K_ref: 16 candidates from 30.5 to 32 levels.
  constexpr ScaleGrid kGrid{.first = -0.5f, .step = 0.1f, .n_steps = 15};
  for (size_t b = 0; b < blocks.size(); ++b) {
    const AffineSuperBlock sb =
        quantize_affine_super_block(values.data() + kBlockElemsK * b, 31, kGrid);
    BlockQ5K& block = blocks[b];
    block.d = sb.d;
    block.dmin = sb.dmin;
    std::memcpy(block.scales, sb.scales.data(), kScaleBytesK4);
    std::memset(block.qh, 0, sizeof(block.qh));
    for (int chunk = 0; chunk < 4; ++chunk) {
      for (int l = 0; l < 32; ++l) {
        const uint8_t lo = sb.levels[64 * chunk + l];
        const uint8_t hi = sb.levels[64 * chunk + 32 + l];
        block.qs[32 * chunk + l] = static_cast<uint8_t>((lo & 0xf) | ((hi & 0xf) << 4));
        block.qh[l] |=
            static_cast<uint8_t>(((lo >> 4) << (2 * chunk)) | ((hi >> 4) << (2 * chunk + 1)));
      }
    }
  }
}

void quantize_q6_k(std::span<const float> values, std::span<BlockQ6K> blocks) {
  check_sizes(values.size(), blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    const float* x = values.data() + kBlockElemsK * b;
    BlockQ6K& block = blocks[b];

    std::array<float, kSubBlocksQ6> scales;
    float max_scale = 0, max_abs_scale = 0;  // the scale of largest magnitude, and its magnitude
    for (int j = 0; j < kSubBlocksQ6; ++j) {
      scales[j] = fit_symmetric_levels({x + kSubElemsQ6 * j, kSubElemsQ6}, 32);
      if (std::fabs(scales[j]) > max_abs_scale) {
        max_abs_scale = std::fabs(scales[j]);
        max_scale = scales[j];
      }
    }
    if (max_abs_scale == 0.0f) {  // all (near) zero: every byte 0 decodes to 0
      std::memset(&block, 0, sizeof(block));
      continue;
    }

    // Sub-block scales as int8 multiples of the fp16 super-scale; the largest
    // maps to -128, the side with the extra value (as ggml does).
    const float inv_scale = -128.0f / max_scale;
    block.d = fp32_to_fp16(1.0f / inv_scale);
    for (int j = 0; j < kSubBlocksQ6; ++j) {
      block.scales[j] =
          static_cast<int8_t>(std::clamp(nearest_int(inv_scale * scales[j]), -128, 127));
    }

    std::array<uint8_t, kBlockElemsK> levels;  // 0..63, value q - 32
    const float d = fp16_to_fp32(block.d);
    for (int j = 0; j < kSubBlocksQ6; ++j) {
      const float step = d * block.scales[j];
      for (int l = 0; l < kSubElemsQ6; ++l) {
        const int e = kSubElemsQ6 * j + l;
        levels[e] = static_cast<uint8_t>(
            step == 0.0f ? 32 : std::clamp(nearest_int(x[e] / step), -32, 31) + 32);
      }
    }

    for (int half = 0; half < 2; ++half) {  // 128 elements: 64 bytes of ql, 32 of qh
      const uint8_t* q = levels.data() + 128 * half;
      for (int l = 0; l < 32; ++l) {
        block.ql[64 * half + l] = static_cast<uint8_t>((q[l] & 0xf) | ((q[l + 64] & 0xf) << 4));
        block.ql[64 * half + l + 32] =
            static_cast<uint8_t>((q[l + 32] & 0xf) | ((q[l + 96] & 0xf) << 4));
        block.qh[32 * half + l] =
            static_cast<uint8_t>((q[l] >> 4) | ((q[l + 32] >> 4) << 2) | ((q[l + 64] >> 4) << 4) |
                                 ((q[l + 96] >> 4) << 6));
      }
    }
  }
}

}  // namespace strata
