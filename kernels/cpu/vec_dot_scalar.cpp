// Scalar reference dot products: the plainest statement of each format's
// arithmetic, and the path for CPUs without AVX2. The integer kernels sum
// weight-quant x activation-quant products exactly in int, then scale once
// per block (or sub-block) in float, as ggml does; the AVX2 kernels do the
// same integer math and differ only in float summation order.
//
// Weight rows may sit at any byte address (GGUF does not align rows), so
// plain f32 / f16 / bf16 weights are read with memcpy; the block structs are
// packed, so reading them through a block pointer is always aligned.
#include <cstring>

#include "kernels/cpu/activation_quant.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/vec_dot_kernels.h"
#include "kernels/fp16.h"

namespace strata {
namespace {

template <typename Block>
const Block* blocks_at(const std::byte* bytes) {
  return reinterpret_cast<const Block*>(bytes);
}

float dot_f32(int64_t n, const std::byte* weight_row, const std::byte* activations) {
  const auto* x = reinterpret_cast<const float*>(activations);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    float w;
    std::memcpy(&w, weight_row + 4 * i, sizeof(w));
    sum += w * x[i];
  }
  return sum;
}

// F16 and BF16: decode each 16-bit weight (exact), then as f32.
template <float (*kDecode)(uint16_t)>
float dot_16bit(int64_t n, const std::byte* weight_row, const std::byte* activations) {
  const auto* x = reinterpret_cast<const float*>(activations);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    uint16_t bits;
    std::memcpy(&bits, weight_row + 2 * i, sizeof(bits));
    sum += kDecode(bits) * x[i];
  }
  return sum;
}

float dot_q8_0(int64_t n, const std::byte* weight_row, const std::byte* activations) {
  const auto* w = blocks_at<BlockQ8_0>(weight_row);
  const auto* x = blocks_at<BlockQ8_0>(activations);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kBlockElems0; ++b) {
    int sumi = 0;
    for (int i = 0; i < kBlockElems0; ++i) sumi += w[b].qs[i] * x[b].qs[i];
    sum += static_cast<float>(sumi) * (fp16_to_fp32(w[b].d) * fp16_to_fp32(x[b].d));
  }
  return sum;
}

float dot_q4_0(int64_t n, const std::byte* weight_row, const std::byte* activations) {
  constexpr int kHalf = kBlockElems0 / 2;
  const auto* w = blocks_at<BlockQ4_0>(weight_row);
  const auto* x = blocks_at<BlockQ8_0>(activations);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kBlockElems0; ++b) {
    int sumi = 0;
    for (int i = 0; i < kHalf; ++i) {
      const int low = (w[b].qs[i] & 0xf) - 8;   // element i
      const int high = (w[b].qs[i] >> 4) - 8;   // element i + 16
      sumi += low * x[b].qs[i] + high * x[b].qs[i + kHalf];
    }
    sum += static_cast<float>(sumi) * (fp16_to_fp32(w[b].d) * fp16_to_fp32(x[b].d));
  }
  return sum;
}

// Q4_K and Q5_K: x = d * scale[j] * q - dmin * min[j] per 32-element
// sub-block j, so the dot is d * sum_j scale[j] * (q . a)_j
//                          - dmin * sum_j min[j] * (sum of a over j),
// the last factor being two of the activation block's 16-element sums.
// quant(block, e) returns the unsigned quant of element e.
template <typename Block, int (*kQuant)(const Block&, int)>
float dot_k4_style(int64_t n, const std::byte* weight_row, const std::byte* activations) {
  const auto* w = blocks_at<Block>(weight_row);
  const auto* x = blocks_at<BlockQ8K>(activations);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kBlockElemsK; ++b) {
    const std::span<const uint8_t, kScaleBytesK4> packed(w[b].scales);
    int sum_scaled = 0;  // sum_j scale[j] * (q . a)_j
    int sum_mins = 0;    // sum_j min[j] * (sum of a over j)
    for (int j = 0; j < 8; ++j) {
      const ScaleMin6 scale_min = unpack_k4_scale_min(j, packed);
      int dot = 0;
      for (int e = 32 * j; e < 32 * j + 32; ++e) dot += kQuant(w[b], e) * x[b].qs[e];
      sum_scaled += scale_min.scale * dot;
      sum_mins += scale_min.min * (x[b].bsums[2 * j] + x[b].bsums[2 * j + 1]);
    }
    const float d = fp16_to_fp32(w[b].d) * x[b].d;
    const float dmin = fp16_to_fp32(w[b].dmin) * x[b].d;
    sum += d * static_cast<float>(sum_scaled) - dmin * static_cast<float>(sum_mins);
  }
  return sum;
}

// Element e = 64c + 32h + l (chunk c, half h, lane l): nibble h of qs[32c + l].
int quant_q4_k(const BlockQ4K& block, int e) {
  const int chunk = e / 64, high_half = (e / 32) % 2, lane = e % 32;
  return (block.qs[32 * chunk + lane] >> (4 * high_half)) & 0xf;
}

// As Q4_K, plus the fifth bit: bit (e / 32) of qh[e % 32].
int quant_q5_k(const BlockQ5K& block, int e) {
  const int chunk = e / 64, high_half = (e / 32) % 2, lane = e % 32;
  const int low4 = (block.qs[32 * chunk + lane] >> (4 * high_half)) & 0xf;
  const int bit5 = (block.qh[lane] >> (e / 32)) & 1;
  return low4 | (bit5 << 4);
}

// Q6_K: x = d * scales[e / 16] * (q - 32) per 16-element sub-block.
float dot_q6_k(int64_t n, const std::byte* weight_row, const std::byte* activations) {
  const auto* w = blocks_at<BlockQ6K>(weight_row);
  const auto* x = blocks_at<BlockQ8K>(activations);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kBlockElemsK; ++b) {
    const BlockQ6K& block = w[b];
    int sum_scaled = 0;  // sum over sub-blocks of scale * ((q - 32) . a)
    for (int sub = 0; sub < kBlockElemsK / 16; ++sub) {
      int dot = 0;
      for (int e = 16 * sub; e < 16 * sub + 16; ++e) {
        // Half h, quarter k = r / 32, lane l (see BlockQ6K).
        const int half = e / 128, r = e % 128, k = r / 32, lane = r % 32;
        const int low4 = (block.ql[64 * half + lane + 32 * (k & 1)] >> (4 * (k >> 1))) & 0xf;
        const int high2 = (block.qh[32 * half + lane] >> (2 * k)) & 3;
        dot += ((low4 | (high2 << 4)) - 32) * x[b].qs[e];
      }
      sum_scaled += block.scales[sub] * dot;
    }
    sum += fp16_to_fp32(block.d) * x[b].d * static_cast<float>(sum_scaled);
  }
  return sum;
}

}  // namespace

const VecDotKernelSet& vec_dot_kernels_scalar() {
  static constexpr VecDotKernelSet kKernels = {
      .f32 = dot_f32,
      .f16 = dot_16bit<fp16_to_fp32>,
      .bf16 = dot_16bit<bf16_to_fp32>,
      .q8_0 = dot_q8_0,
      .q4_0 = dot_q4_0,
      .q4_k = dot_k4_style<BlockQ4K, quant_q4_k>,
      .q5_k = dot_k4_style<BlockQ5K, quant_q5_k>,
      .q6_k = dot_q6_k,
  };
  return kKernels;
}

}  // namespace strata
