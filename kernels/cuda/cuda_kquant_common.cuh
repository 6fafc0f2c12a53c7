// What the two Q4_K decode kernels of cuda_kquant_decode share (device
// code and launch helpers; included by their .cu files only).
//
// Both first stage every token's x in shared memory as Q8_K blocks (a warp
// per 256 values, the bytes quantize_activations_q8_k writes), with the sum
// of each 32 quants beside them (what the minimums multiply), or copy those
// bytes where x was staged once before them for all their blocks (by the
// norm, or cuda_kquant_stage_x). A row's dot with a token is then a sum of
// one f32 term per Q4_K block, rounded as the CPU rounds it (block_term),
// from the block's integer sums; the terms of blocks b, b + 8, b + 16, ...
// are added in order, and the 8 such sums in the order sum_of_eight fixes:
// so the two kernels give the same bits.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "gpu/cuda_check.h"
#include "gpu/cuda_device.h"
#include "kernels/cuda/cuda_dependent_launch.cuh"
#include "kernels/cuda/cuda_q8k_staging.cuh"
#include "kernels/cuda/cuda_weights_layout.cuh"

namespace strata::kquant {

using cuda_layout::MatrixView;
using cuda_layout::RowView;

constexpr int kWarps = 8;  // sum_of_eight adds a row's 8 lane blocks' or warps' sums
constexpr int kThreads = 32 * kWarps;
constexpr int kBlockQuantBytes = 128;
constexpr int kBlocksPerStep = 8;  // blocks a warp step of the dp4a kernel (4 lanes each)
// Up to this many tokens take the dp4a kernel; more, the mma kernel (both
// Q4_K and Q6_K).
constexpr int64_t kMaxDp4aTokens = 1;
// The mma kernel's two buffers of its warps' sums, after the staged x.
constexpr int64_t kMmaPartialBytes = 2 * kWarps * 16 * 8 * sizeof(float);

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct KQuantParams {
  MatrixView w;
  const float* x;  // [n_tokens][row_length]
  float* y;        // [n_tokens][n_rows], or [n_tokens][swiglu_n] of silu(gate) * up
  int n_tokens;
  int token_bytes;   // staged_token_bytes(row_length)
  bool x_aligned;    // x's rows load as float4
  int64_t swiglu_n;  // > 0: w is [gate | up], swiglu_n rows each
  // Non-null: x already staged by an earlier kernel (n_tokens x token_bytes
  // bytes, stage_q8k's layout), copied rather than quantized again.
  const uint8_t* x_staged;
};

struct StagedToken {
  const int8_t* quants;
  const int* sums;      // per 32 quants (Q4_K's sub-blocks)
  const float* scales;  // per block
  const int* sums16;    // per 16 quants (Q6_K's sub-blocks)
};

__device__ __forceinline__ StagedToken staged_token(const KQuantParams& p, const uint8_t* smem,
                                                    int token) {
  const uint8_t* at = smem + token * p.token_bytes;
  const int n = p.w.row_length;
  return {reinterpret_cast<const int8_t*>(at), reinterpret_cast<const int*>(at + n),
          reinterpret_cast<const float*>(at + n + n / 32 * 4),
          reinterpret_cast<const int*>(at + n + n / 32 * 4 + n / kBlockElems * 4)};
}

// ---------------------------------------------------------------------------
// x as Q8_K

// All threads (kBlockWarps warps): every token's x into shared memory, a
// warp per block of 256 values (stage_q8k_block), or, where an earlier
// kernel has staged x already (KQuantParams::x_staged), its bytes copied.
template <int kBlockWarps = kWarps>
__device__ inline void stage_q8k(const KQuantParams& p, uint8_t* smem) {
  if (p.x_staged != nullptr) {
    const auto* src = reinterpret_cast<const uint4*>(p.x_staged);
    auto* dst = reinterpret_cast<uint4*>(smem);
    const int n_units = p.n_tokens * p.token_bytes / 16;
#pragma unroll 4
    for (int i = static_cast<int>(threadIdx.x); i < n_units; i += 32 * kBlockWarps) {
      dst[i] = src[i];
    }
    return;
  }
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int n_blocks = p.w.n_blocks;
  for (int item = warp; item < p.n_tokens * n_blocks; item += kBlockWarps) {
    const int token = item / n_blocks, block = item % n_blocks;
    float v[8];
    load_eight(p.x + static_cast<int64_t>(token) * p.w.row_length + kBlockElems * block + 8 * lane,
               p.x_aligned, v);
    stage_q8k_block(smem + token * p.token_bytes, p.w.row_length, block, v, lane);
  }
}

// ---------------------------------------------------------------------------
// A block's term and a row's sum

// A block's share of a row's dot with one token, from the block's integer
// sums, exactly as the CPU's dot_k4_style rounds it: d = d_w * x_d, dmin =
// dmin_w * x_d, then d * scaled - dmin * shifted. Both decode kernels add
// these terms of a row's blocks b, b + 8, ... in order (lane block or warp b
// of 8), then the 8 sums as sum_of_eight does: so they give the same bits.
__device__ __forceinline__ float block_term(uint32_t d_dmin_bits, float x_d, int scaled,
                                            int shifted) {
  const float d = __fmul_rn(
      __half2float(__ushort_as_half(static_cast<unsigned short>(d_dmin_bits & 0xffffu))), x_d);
  const float dmin = __fmul_rn(
      __half2float(__ushort_as_half(static_cast<unsigned short>(d_dmin_bits >> 16))), x_d);
  return __fsub_rn(__fmul_rn(d, __int2float_rn(scaled)), __fmul_rn(dmin, __int2float_rn(shifted)));
}

// A Q6_K block's share of a row's dot with one token, as the CPU's dot_q6_k
// rounds it: (d * x_d) * scaled, scaled the integer sum over the block's
// sub-blocks of scale * ((q - 32) . x). Both decode kernels form it so.
__device__ __forceinline__ float q6_block_term(uint32_t d_bits, float x_d, int scaled) {
  const float d = __half2float(__ushort_as_half(static_cast<unsigned short>(d_bits & 0xffffu)));
  return __fmul_rn(__fmul_rn(d, x_d), __int2float_rn(scaled));
}

// A Q6_K block's bytes: ql[128] (low nibbles), qh[64] (top two bits).
constexpr int kQ6BlockBytes = 192;

// Signed byte i of a Q6_K block's 16 sub-block scales.
__device__ __forceinline__ int q6_scale(uint4 scales, int i) {
  const uint32_t words[4] = {scales.x, scales.y, scales.z, scales.w};
  return static_cast<int>(static_cast<int8_t>((words[i / 4] >> (8 * (i % 4))) & 0xffu));
}

// ((v0 + v4) + (v2 + v6)) + ((v1 + v5) + (v3 + v7)): how the dp4a kernel's
// butterfly over its 8 lane blocks adds their sums (lane bits 4, 3, 2).
__device__ __forceinline__ float sum_of_eight(const float (&v)[8]) {
  return __fadd_rn(__fadd_rn(__fadd_rn(v[0], v[4]), __fadd_rn(v[2], v[6])),
                   __fadd_rn(__fadd_rn(v[1], v[5]), __fadd_rn(v[3], v[7])));
}

// A warp's place in its stream of steps: which of its rows, which step.
struct Cursor {
  int row = 0;
  int step = 0;
};

// ---------------------------------------------------------------------------
// Host

// Blocks of `kernel` to launch: as many as fit the GPU at once, fewer when
// there are fewer work items (warps of outputs for the dp4a kernel, groups
// of rows for the mma kernel, items_per_block to a block), evened out so
// that every block has the same number of items, to one.
template <typename Kernel>
int64_t grid_for(Kernel* kernel, int64_t n_items, int items_per_block, int64_t smem_bytes,
                 int threads = kThreads) {
  if (smem_bytes > (48 << 10)) {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem_bytes)));
  }
  int per_sm = 0;
  STRATA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads,
                                                                  static_cast<size_t>(smem_bytes)));
  const int64_t wave = int64_t{std::max(per_sm, 1)} * cuda_multiprocessor_count() * items_per_block;
  const int64_t per_slot = ceil_div(n_items, wave);
  return ceil_div(ceil_div(n_items, per_slot), items_per_block);
}

// `kernel` over n_items work items, grid_for's grid of `threads`-thread
// blocks, as a dependent launch: its first weight loads go out while the
// kernel before it finishes.
template <typename Kernel>
void launch_over(Kernel* kernel, int64_t n_items, int items_per_block, int64_t smem_bytes,
                 const KQuantParams& p, cudaStream_t stream, int threads = kThreads) {
  const int64_t grid = grid_for(kernel, n_items, items_per_block, smem_bytes, threads);
  launch_dependent(kernel, dim3(static_cast<unsigned>(grid)), dim3(threads),
                   static_cast<size_t>(smem_bytes), stream, p);
}

// The kernels on `stream`: dp4a up to kMaxDp4aTokens tokens, mma above;
// n_outputs = rows of y (swiglu_n with the fused SwiGLU).
// One token: Q4_K a block a lane (cuda_kquant_block_lanes.cu), Q6_K a
// quarter block a lane (cuda_kquant_dp4a.cu).
void launch_block_lane_decode(const KQuantParams& p, int64_t n_outputs, cudaStream_t stream);
void launch_dp4a_decode(const KQuantParams& p, int64_t n_outputs, cudaStream_t stream);
void launch_mma_decode(const KQuantParams& p, int64_t n_outputs, WeightType type,
                       cudaStream_t stream);

}  // namespace strata::kquant
