// x quantized to Q8_K as the integer decode products read it, in the layout
// they stage it in shared memory: device helpers shared by those kernels
// (cuda_kquant_common.cuh) and by the norm kernels that stage x once for
// them (cuda_ops.cu). Included by .cu files only.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

namespace strata::kquant {

constexpr int kBlockElems = 256;  // a Q4_K block of weights, a Q8_K block of x

// One token's staged x: quants [row_length], the sums of each 32 quants
// (int32), each block's scale (f32), the sums of each 16 quants (int32). Tokens lie 32 bytes past a
// multiple of 128 apart, so that the mma kernel's 8 lanes reading 8 bytes of 8 tokens at one offset
// (its B fragments) spread over the banks.
inline int64_t staged_token_bytes(int64_t row_length) {
  const int64_t bytes =
      row_length + row_length / 32 * 4 + row_length / kBlockElems * 4 + row_length / 16 * 4;
  return (bytes + 127) / 128 * 128 + 32;
}

// The staged quants' 16-byte unit u (quants 16u .. 16u + 15) lies at unit
// u ^ ((u >> 4) & 7): within its block of 16 units, rotated by the block's
// index & 7. The one-token Q4_K kernel's lanes each read the same unit of
// consecutive blocks (cuda_kquant_block_lanes.cu); without the rotation the
// 8 lanes of a quarter warp would meet in one 16-byte bank group (blocks are
// 256 bytes apart), with it they meet in all 8: one shared-memory wavefront
// a read instead of eight.
__device__ __forceinline__ int swizzled_unit(int u) { return u ^ ((u >> 4) & 7); }

// Lane l's 8 values: elements 8l .. 8l + 7 of the 256 at src.
__device__ __forceinline__ void load_eight(const float* src, bool aligned, float (&v)[8]) {
  if (aligned) {
    const float4 a = __ldg(reinterpret_cast<const float4*>(src));
    const float4 b = __ldg(reinterpret_cast<const float4*>(src) + 1);
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
  } else {
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = __ldg(src + i);
  }
}

// The block's value of largest magnitude, the first one on ties (as the
// CPU's loop finds it): each lane's candidate, then the warp's, by
// magnitude, then by index.
__device__ __forceinline__ float largest_value(const float (&v)[8], int lane) {
  float magnitude = 0.0f, value = 0.0f;
  int index = INT_MAX;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    if (fabsf(v[i]) > magnitude) {
      magnitude = fabsf(v[i]);
      value = v[i];
      index = 8 * lane + i;
    }
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other_magnitude = __shfl_xor_sync(0xffffffffu, magnitude, offset);
    const float other_value = __shfl_xor_sync(0xffffffffu, value, offset);
    const int other_index = __shfl_xor_sync(0xffffffffu, index, offset);
    if (other_magnitude > magnitude || (other_magnitude == magnitude && other_index < index)) {
      magnitude = other_magnitude;
      value = other_value;
      index = other_index;
    }
  }
  return value;
}

// One block of 256 values of a token's x into its staged bytes at `at`
// (row_length values a token; lane l holds values 8l .. 8l + 7 of the
// block), byte for byte what quantize_activations_q8_k writes: the value of
// largest magnitude maps to -127, quants round half to even, scale 1 / that
// factor; an all-zero block is all zeros.
__device__ __forceinline__ void stage_q8k_block(uint8_t* at, int row_length, int block,
                                                const float (&v)[8], int lane) {
  const float largest = largest_value(v, lane);
  const float factor = largest == 0.0f ? 0.0f : __fdiv_rn(-127.0f, largest);
  uint32_t words[2] = {0, 0};
  int sum = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int q = min(127, __float2int_rn(__fmul_rn(factor, v[i])));
    sum += q;
    words[i / 4] |= (static_cast<uint32_t>(q) & 0xffu) << (8 * (i % 4));
  }
  sum += __shfl_xor_sync(0xffffffffu, sum, 1);  // 16 quants
  const int n = row_length;
  if (lane % 2 == 0) {
    reinterpret_cast<int*>(at + n + n / 32 * 4 + n / kBlockElems * 4)[16 * block + lane / 2] = sum;
  }
  sum += __shfl_xor_sync(0xffffffffu, sum, 2);  // 32 quants
  const int unit = swizzled_unit(16 * block + lane / 2);
  *reinterpret_cast<uint2*>(at + 16 * unit + 8 * (lane % 2)) = make_uint2(words[0], words[1]);
  if (lane % 4 == 0) reinterpret_cast<int*>(at + n)[8 * block + lane / 4] = sum;
  if (lane == 0) {
    reinterpret_cast<float*>(at + n + n / 32 * 4)[block] =
        largest == 0.0f ? 0.0f : __fdiv_rn(1.0f, factor);
  }
}

}  // namespace strata::kquant
