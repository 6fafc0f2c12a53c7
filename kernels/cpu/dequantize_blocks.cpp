// Decoders of the quantized block types. Each follows ggml's dequantize_row_*
// operation for operation (d * scale first, then * q, then - min), so the
// floats match ggml's scalar path bit for bit.
//
// Each type has a one-block decoder over __restrict pointers (the output
// never overlaps the block, so the compiler needs no run-time overlap checks)
// written as fixed-length loops the auto-vectorizer turns into SIMD code.
#include <cstdint>

#include "common/check.h"
#include "kernels/cpu/quant_rows.h"
#include "kernels/fp16.h"

namespace strata {
namespace {

void check_sizes(size_t n_blocks, size_t block_elems, size_t n_out) {
  STRATA_CHECK(n_out == n_blocks * block_elems, n_blocks, " blocks of ", block_elems,
               " elements into ", n_out, " floats");
}

// Runs `decode_block(block, y)` over consecutive blocks and output runs.
template <typename Block, int kElems,
          void (*kDecodeBlock)(const Block* __restrict, float* __restrict)>
void decode_blocks(std::span<const Block> blocks, std::span<float> out) {
  check_sizes(blocks.size(), kElems, out.size());
  for (size_t b = 0; b < blocks.size(); ++b) kDecodeBlock(&blocks[b], out.data() + kElems * b);
}

void decode_q8_0(const BlockQ8_0* __restrict block, float* __restrict y) {
  const float d = fp16_to_fp32(block->d);
  for (int i = 0; i < kBlockElems0; ++i) y[i] = d * static_cast<float>(block->qs[i]);
}

void decode_q4_0(const BlockQ4_0* __restrict block, float* __restrict y) {
  constexpr int kHalf = kBlockElems0 / 2;
  const float d = fp16_to_fp32(block->d);
  for (int i = 0; i < kHalf; ++i) y[i] = static_cast<float>((block->qs[i] & 0xf) - 8) * d;
  for (int i = 0; i < kHalf; ++i) y[i + kHalf] = static_cast<float>((block->qs[i] >> 4) - 8) * d;
}

void decode_q4_k(const BlockQ4K* __restrict block, float* __restrict y) {
  const float d = fp16_to_fp32(block->d);
  const float dmin = fp16_to_fp32(block->dmin);
  const std::span<const uint8_t, kScaleBytesK4> packed(block->scales);
  for (int chunk = 0; chunk < 4;
       ++chunk) {  // 64 elements: sub-blocks 2c (low nibbles), 2c+1 (high)
    const ScaleMin6 lo = unpack_k4_scale_min(2 * chunk, packed);
    const ScaleMin6 hi = unpack_k4_scale_min(2 * chunk + 1, packed);
    const float d_lo = d * lo.scale, m_lo = dmin * lo.min;
    const float d_hi = d * hi.scale, m_hi = dmin * hi.min;
    const uint8_t* q = block->qs + 32 * chunk;
    float* y_chunk = y + 64 * chunk;
    for (int l = 0; l < 32; ++l) y_chunk[l] = d_lo * static_cast<float>(q[l] & 0xf) - m_lo;
    for (int l = 0; l < 32; ++l) y_chunk[32 + l] = d_hi * static_cast<float>(q[l] >> 4) - m_hi;
  }
}

void decode_q5_k(const BlockQ5K* __restrict block, float* __restrict y) {
  const float d = fp16_to_fp32(block->d);
  const float dmin = fp16_to_fp32(block->dmin);
  const std::span<const uint8_t, kScaleBytesK4> packed(block->scales);
  const uint8_t* qh = block->qh;
  for (int chunk = 0; chunk < 4; ++chunk) {
    const ScaleMin6 lo = unpack_k4_scale_min(2 * chunk, packed);
    const ScaleMin6 hi = unpack_k4_scale_min(2 * chunk + 1, packed);
    const float d_lo = d * lo.scale, m_lo = dmin * lo.min;
    const float d_hi = d * hi.scale, m_hi = dmin * hi.min;
    const uint8_t* q = block->qs + 32 * chunk;
    float* y_chunk = y + 64 * chunk;
    const int bit_lo = 2 * chunk, bit_hi = 2 * chunk + 1;  // fifth bits in qh
    for (int l = 0; l < 32; ++l) {
      const int q5 = (q[l] & 0xf) | (((qh[l] >> bit_lo) & 1) << 4);
      y_chunk[l] = d_lo * static_cast<float>(q5) - m_lo;
    }
    for (int l = 0; l < 32; ++l) {
      const int q5 = (q[l] >> 4) | (((qh[l] >> bit_hi) & 1) << 4);
      y_chunk[32 + l] = d_hi * static_cast<float>(q5) - m_hi;
    }
  }
}

void decode_q6_k(const BlockQ6K* __restrict block, float* __restrict y) {
  const float d = fp16_to_fp32(block->d);
  for (int half = 0; half < 2; ++half) {  // 128 elements each
    const uint8_t* ql = block->ql + 64 * half;
    const uint8_t* qh = block->qh + 32 * half;
    const int8_t* sc = block->scales + 8 * half;
    float* y_half = y + 128 * half;
    for (int s = 0; s < 2; ++s) {  // l in 16s..16s+15 shares the scales sc[s + 2k]
      const float d1 = d * sc[s + 0], d2 = d * sc[s + 2], d3 = d * sc[s + 4], d4 = d * sc[s + 6];
      for (int l = 16 * s; l < 16 * s + 16; ++l) {
        const int q1 = ((ql[l] & 0xf) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xf) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y_half[l] = d1 * static_cast<float>(q1);
        y_half[l + 32] = d2 * static_cast<float>(q2);
        y_half[l + 64] = d3 * static_cast<float>(q3);
        y_half[l + 96] = d4 * static_cast<float>(q4);
      }
    }
  }
}

}  // namespace

void dequantize_q8_0(std::span<const BlockQ8_0> blocks, std::span<float> out) {
  decode_blocks<BlockQ8_0, kBlockElems0, decode_q8_0>(blocks, out);
}
void dequantize_q4_0(std::span<const BlockQ4_0> blocks, std::span<float> out) {
  decode_blocks<BlockQ4_0, kBlockElems0, decode_q4_0>(blocks, out);
}
void dequantize_q4_k(std::span<const BlockQ4K> blocks, std::span<float> out) {
  decode_blocks<BlockQ4K, kBlockElemsK, decode_q4_k>(blocks, out);
}
void dequantize_q5_k(std::span<const BlockQ5K> blocks, std::span<float> out) {
  decode_blocks<BlockQ5K, kBlockElemsK, decode_q5_k>(blocks, out);
}
void dequantize_q6_k(std::span<const BlockQ6K> blocks, std::span<float> out) {
  decode_blocks<BlockQ6K, kBlockElemsK, decode_q6_k>(blocks, out);
}

}  // namespace strata
