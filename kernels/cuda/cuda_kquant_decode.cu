// cuda_kquant_decode (cuda_kquant_decode.h): Q4_K decode products on dp4a.
//
// A block first stages every token's x in shared memory as Q8_K blocks (a
// warp per 256 values, the bytes quantize_activations_q8_k writes), with the
// sum of each 32 quants beside them (what the minimums multiply). Then each
// warp walks its rows, 8 Q4_K blocks of a row a step: lane l takes quarter
// c = l % 4 of block 8 * step + l / 4, i.e. qs bytes 32c .. 32c + 31 (two
// 16-byte loads), whose low nibbles are sub-block 2c and high nibbles
// sub-block 2c + 1 (elements 64c + i and 64c + 32 + i). Its integer sums
// scaled and shifted by the block's scale and minimum go into one f32 sum
// per lane and token; at a row's end the warp adds its lanes' sums in a
// fixed order. A warp's rows are output rows w, w + (warps in the grid), ...
// and its steps one stream of loads, kDepth steps ahead, across rows.
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>

#include "common/check.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_dependent_launch.cuh"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_kquant_decode.h"
#include "kernels/cuda/cuda_swiglu.cuh"
#include "kernels/cuda/cuda_warp_reduce.cuh"
#include "kernels/cuda/cuda_weights_layout.cuh"

namespace strata {
namespace {

using cuda_layout::MatrixView;
using cuda_layout::RowView;

constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;
constexpr int kBlockElems = 256;  // a Q4_K block of weights, a Q8_K block of x
constexpr int kBlockQuantBytes = 128;
constexpr int kBlocksPerStep = 8;  // 4 lanes a block
constexpr int kDepth = 4;          // steps of a warp whose loads are in flight

// One token's staged x: quants [row_length], the sums of each 32 quants
// (int32), each block's scale (f32); 16-byte aligned.
int64_t staged_token_bytes(int64_t row_length) {
  const int64_t bytes = row_length + row_length / 32 * 4 + row_length / kBlockElems * 4;
  return (bytes + 15) / 16 * 16;
}

struct KQuantParams {
  MatrixView w;
  const float* x;  // [n_tokens][row_length]
  float* y;        // [n_tokens][n_rows], or [n_tokens][swiglu_n] of silu(gate) * up
  int n_tokens;
  int token_bytes;   // staged_token_bytes(row_length)
  bool x_aligned;    // x's rows load as float4
  int64_t swiglu_n;  // > 0: w is [gate | up], swiglu_n rows each
};

struct StagedToken {
  const int8_t* quants;
  const int* sums;      // per 32 quants
  const float* scales;  // per block
};

__device__ __forceinline__ StagedToken staged_token(const KQuantParams& p, const uint8_t* smem,
                                                    int token) {
  const uint8_t* at = smem + token * p.token_bytes;
  const int n = p.w.row_length;
  return {reinterpret_cast<const int8_t*>(at), reinterpret_cast<const int*>(at + n),
          reinterpret_cast<const float*>(at + n + n / 32 * 4)};
}

// ---------------------------------------------------------------------------
// x as Q8_K

// The staged quants' 16-byte unit u (quants 16u .. 16u + 15) lies at unit
// u ^ ((u >> 3) & 3). A lane reads its quarter's 64 quants (units 16 * block
// + 4c .. + 3) one unit at a time, and the 8 lanes of a quarter warp (two
// blocks, four quarters) would meet in 2 of the 8 16-byte bank groups
// (quarters 64 bytes apart, blocks 256); the swizzle moves bits 3 and 4 of
// the unit (c / 2 and the block's parity) into the low two, so they meet in
// all 8: one shared-memory wavefront a read instead of four.
__device__ __forceinline__ int swizzled_unit(int u) { return u ^ ((u >> 3) & 3); }

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

// All threads: every token's x into shared memory, a warp per block of 256
// values, byte for byte what quantize_activations_q8_k writes: the value of
// largest magnitude maps to -127, quants round half to even, scale 1 / that
// factor; an all-zero block is all zeros.
__device__ void stage_q8k(const KQuantParams& p, uint8_t* smem) {
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int n_blocks = p.w.n_blocks;
  for (int item = warp; item < p.n_tokens * n_blocks; item += kWarps) {
    const int token = item / n_blocks, block = item % n_blocks;
    float v[8];
    load_eight(p.x + static_cast<int64_t>(token) * p.w.row_length + kBlockElems * block + 8 * lane,
               p.x_aligned, v);
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
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    uint8_t* at = smem + token * p.token_bytes;
    const int n = p.w.row_length;
    const int unit = swizzled_unit(16 * block + lane / 2);
    *reinterpret_cast<uint2*>(at + 16 * unit + 8 * (lane % 2)) = make_uint2(words[0], words[1]);
    if (lane % 4 == 0) reinterpret_cast<int*>(at + n)[8 * block + lane / 4] = sum;
    if (lane == 0) {
      reinterpret_cast<float*>(at + n + n / 32 * 4)[block] =
          largest == 0.0f ? 0.0f : __fdiv_rn(1.0f, factor);
    }
  }
}

// ---------------------------------------------------------------------------
// The weights

// A lane's share of one step: its quarter of a Q4_K block, and the block's
// 16 meta bytes (d, dmin, scales[12]).
struct Quarter {
  uint4 low, high;  // qs bytes 32c .. 32c + 15, 32c + 16 .. 32c + 31
  uint4 meta;
};

__device__ __forceinline__ Quarter load_quarter(const RowView& row, int block, int c) {
  const uint8_t* qs = row.quants + kBlockQuantBytes * block + 32 * c;
  return {cuda_layout::load_chunk(qs), cuda_layout::load_chunk(qs + 16),
          __ldg(reinterpret_cast<const uint4*>(row.meta + 16 * block))};
}

// The 6-bit scale and minimum of sub-blocks 2c and 2c + 1 (ggml's
// get_scale_min_k4): for sub-blocks 0..3, scales[j] and scales[j + 4] masked
// to 6 bits; for 4..7, the low 4 bits from scales[j + 4], the top 2 from bits
// 6-7 of scales[j - 4] (scale) and scales[j] (minimum). meta.y, z, w are
// scales[0..3], [4..7], [8..11].
struct SubBlockScales {
  int scale[2];
  int min[2];
};

__device__ __forceinline__ SubBlockScales sub_block_scales(uint4 meta, int c) {
  const bool upper = c >= 2;
  const uint32_t scales =
      upper ? (meta.w & 0x0f0f0f0fu) | ((meta.y >> 2) & 0x30303030u) : meta.y & 0x3f3f3f3fu;
  const uint32_t mins =
      upper ? ((meta.w >> 4) & 0x0f0f0f0fu) | ((meta.z >> 2) & 0x30303030u) : meta.z & 0x3f3f3f3fu;
  const int shift = 16 * (c % 2);  // byte (2c) % 4
  return {
      {static_cast<int>((scales >> shift) & 0xffu),
       static_cast<int>((scales >> (shift + 8)) & 0xffu)},
      {static_cast<int>((mins >> shift) & 0xffu), static_cast<int>((mins >> (shift + 8)) & 0xffu)}};
}

// acc[t] += the lane's quarter of block `block` times token t's x, for the
// real tokens: d * x_d * (scale . integer dots) - dmin * x_d * (min . sums
// of x), each rounded once in that order whatever the token count.
template <int kTokens>
__device__ __forceinline__ void dot_quarter(const Quarter& q, int block, int c,
                                            const KQuantParams& p, const uint8_t* smem,
                                            float (&acc)[kTokens]) {
  const uint32_t words[8] = {q.low.x,  q.low.y,  q.low.z,  q.low.w,
                             q.high.x, q.high.y, q.high.z, q.high.w};
  int low[8], high[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    low[i] = static_cast<int>(words[i] & 0x0f0f0f0fu);
    high[i] = static_cast<int>((words[i] >> 4) & 0x0f0f0f0fu);
  }
  const SubBlockScales s = sub_block_scales(q.meta, c);
  const float d = __half2float(__ushort_as_half(static_cast<unsigned short>(q.meta.x & 0xffffu)));
  const float dmin = __half2float(__ushort_as_half(static_cast<unsigned short>(q.meta.x >> 16)));
  const int swizzle = ((16 * block + 4 * c) >> 3) & 3;  // swizzled_unit's, for all four units
#pragma unroll
  for (int t = 0; t < kTokens; ++t) {
    if (t >= p.n_tokens) break;
    const StagedToken x = staged_token(p, smem, t);
    const int4* units = reinterpret_cast<const int4*>(x.quants);
    const int u = 16 * block + 4 * c;  // units u .. u + 3, swizzled within the four
    const int4 x0 = units[u + (0 ^ swizzle)], x1 = units[u + (1 ^ swizzle)];
    const int4 x2 = units[u + (2 ^ swizzle)], x3 = units[u + (3 ^ swizzle)];
    const int xs[16] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w,
                        x2.x, x2.y, x2.z, x2.w, x3.x, x3.y, x3.z, x3.w};
    int dot_low = 0, dot_high = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      dot_low = __dp4a(low[i], xs[i], dot_low);
      dot_high = __dp4a(high[i], xs[8 + i], dot_high);
    }
    const int2 sums = *reinterpret_cast<const int2*>(x.sums + 8 * block + 2 * c);
    const int scaled = s.scale[0] * dot_low + s.scale[1] * dot_high;
    const int shifted = s.min[0] * sums.x + s.min[1] * sums.y;
    const float x_d = x.scales[block];
    acc[t] = __fmaf_rn(__fmul_rn(d, x_d), __int2float_rn(scaled), acc[t]);
    acc[t] = __fmaf_rn(-__fmul_rn(dmin, x_d), __int2float_rn(shifted), acc[t]);
  }
}

// ---------------------------------------------------------------------------
// The kernel

// A warp's place in its stream of steps: which of its rows, which step.
struct Cursor {
  int row = 0;
  int step = 0;
};

template <int kTokens>
__global__ void __launch_bounds__(kThreads, 2) q4k_decode_kernel(KQuantParams p) {
  extern __shared__ __align__(16) uint8_t smem[];
  let_next_kernel_start();  // it waits for this kernel's writes before it reads them
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int c = lane % 4, lane_block = lane / 4;
  const int n_blocks = p.w.n_blocks;
  const int steps = (n_blocks + kBlocksPerStep - 1) / kBlocksPerStep;
  const bool swiglu = p.swiglu_n > 0;
  const int rows_per_output = swiglu ? 2 : 1;  // the gate row, then its up row
  const int64_t n_outputs = swiglu ? p.swiglu_n : p.w.n_rows;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kWarps + warp;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kWarps;
  const int n_outputs_mine =
      first < n_outputs ? static_cast<int>((n_outputs - first + stride - 1) / stride) : 0;
  const int n_rows_mine = n_outputs_mine * rows_per_output;

  const auto output_of = [&](int row) { return first + (row / rows_per_output) * stride; };
  const auto matrix_row = [&](int row) {
    return row % rows_per_output == 0 ? output_of(row) : p.swiglu_n + output_of(row);
  };
  const auto load = [&](const Cursor& at, Quarter& q) {
    const int block = kBlocksPerStep * at.step + lane_block;
    if (at.row < n_rows_mine && block < n_blocks) {
      q = load_quarter(p.w.row(matrix_row(at.row)), block, c);
    } else {
      q = Quarter{};
    }
  };
  const auto advance = [&](Cursor& at) {
    if (++at.step == steps) {
      at.step = 0;
      ++at.row;
    }
  };

  Quarter quarters[kDepth];
  Cursor next;
#pragma unroll
  for (int r = 0; r < kDepth; ++r) {
    load(next, quarters[r]);
    advance(next);
  }
  wait_for_prior_kernels();  // x is theirs (the weights above are not)
  stage_q8k(p, smem);
  __syncthreads();

  float acc[kTokens] = {}, gate[kTokens] = {};
  Cursor at;
  for (int i0 = 0; i0 < n_rows_mine * steps; i0 += kDepth) {
#pragma unroll
    for (int r = 0; r < kDepth; ++r) {
      if (at.row >= n_rows_mine) break;  // the same for the whole warp
      const int block = kBlocksPerStep * at.step + lane_block;
      if (block < n_blocks) dot_quarter<kTokens>(quarters[r], block, c, p, smem, acc);
      load(next, quarters[r]);
      advance(next);
      if (at.step == steps - 1) {  // the row's last step: its sums
        const int64_t out = output_of(at.row);
#pragma unroll
        for (int t = 0; t < kTokens; ++t) {
          const float sum = warp_sum(acc[t]);
          acc[t] = 0.0f;
          if (t >= p.n_tokens) continue;
          if (swiglu && at.row % 2 == 0) {
            gate[t] = sum;
          } else if (lane == 0) {
            p.y[t * n_outputs + out] = swiglu ? silu_times(gate[t], sum) : sum;
          }
        }
      }
      advance(at);
    }
  }
}

// ---------------------------------------------------------------------------
// Host code

template <typename Fn>
void with_token_bucket(int64_t n_tokens, Fn&& fn) {
  if (n_tokens <= 1) return fn(std::integral_constant<int, 1>{});
  if (n_tokens <= 2) return fn(std::integral_constant<int, 2>{});
  if (n_tokens <= 4) return fn(std::integral_constant<int, 4>{});
  return fn(std::integral_constant<int, 8>{});
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// As many blocks as fit the GPU at once (fewer for small matrices), evened
// out so that every warp has the same number of outputs, to one.
template <int kTokens>
int64_t grid_for(int64_t n_outputs, int64_t smem_bytes) {
  auto* kernel = q4k_decode_kernel<kTokens>;
  if (smem_bytes > (48 << 10)) {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem_bytes)));
  }
  int per_sm = 0;
  STRATA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads,
                                                                  static_cast<size_t>(smem_bytes)));
  const int64_t wave_warps = int64_t{std::max(per_sm, 1)} * cuda_multiprocessor_count() * kWarps;
  const int64_t per_warp = ceil_div(n_outputs, wave_warps);
  return ceil_div(ceil_div(n_outputs, per_warp), kWarps);
}

// Tokens a launch stages at once: all of them unless their x outgrows the
// device's shared memory (long rows, many tokens); then in passes, each
// token's result the same.
int64_t tokens_per_pass(const CudaWeightMatrix& w) {
  return cuda_max_shared_memory_per_block() / staged_token_bytes(w.row_length());
}

void run_kquant(const CudaWeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                int64_t swiglu_n, cudaStream_t stream) {
  const int64_t n_outputs = swiglu_n > 0 ? swiglu_n : w.n_rows();
  const int64_t token_bytes = staged_token_bytes(w.row_length());
  const int64_t per_pass = std::min(n_tokens, tokens_per_pass(w));
  for (int64_t t0 = 0; t0 < n_tokens; t0 += per_pass) {
    const int64_t n = std::min(per_pass, n_tokens - t0);
    const float* xt = x + t0 * w.row_length();
    const KQuantParams p{.w = cuda_layout::matrix_view(w),
                         .x = xt,
                         .y = y + t0 * n_outputs,
                         .n_tokens = static_cast<int>(n),
                         .token_bytes = static_cast<int>(token_bytes),
                         .x_aligned = reinterpret_cast<uintptr_t>(xt) % 16 == 0,
                         .swiglu_n = swiglu_n};
    const int64_t smem_bytes = n * token_bytes;
    with_token_bucket(n, [&](auto bucket) {
      constexpr int kTokens = decltype(bucket)::value;
      const int64_t grid = grid_for<kTokens>(n_outputs, smem_bytes);
      // A dependent launch: its first weight loads go out while the kernel
      // before it finishes.
      launch_dependent(q4k_decode_kernel<kTokens>, dim3(static_cast<unsigned>(grid)),
                       dim3(kThreads), static_cast<size_t>(smem_bytes), stream, p);
    });
  }
}

}  // namespace

bool cuda_kquant_decode_supports(const CudaWeightMatrix& w, int64_t n_tokens) {
  return w.type() == WeightType::kQ4_K && n_tokens >= 1 && n_tokens <= kMaxKQuantDecodeTokens &&
         w.row_length() <= INT_MAX && w.n_rows() <= INT_MAX && tokens_per_pass(w) >= 1;
}

void cuda_kquant_decode(const CudaWeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                        cudaStream_t stream) {
  STRATA_CHECK(cuda_kquant_decode_supports(w, n_tokens), "no integer decode kernel for ",
               weight_type_name(w.type()), " with ", n_tokens, " tokens");
  run_kquant(w, x, n_tokens, y, 0, stream);
}

bool cuda_kquant_decode_swiglu_supports(const CudaWeightMatrix& w_gate_up, int64_t n_tokens) {
  return w_gate_up.n_rows() % 2 == 0 && cuda_kquant_decode_supports(w_gate_up, n_tokens);
}

void cuda_kquant_decode_swiglu(const CudaWeightMatrix& w_gate_up, const float* x, int64_t n_tokens,
                               float* out, cudaStream_t stream) {
  STRATA_CHECK(cuda_kquant_decode_swiglu_supports(w_gate_up, n_tokens),
               "no fused integer SwiGLU for ", weight_type_name(w_gate_up.type()), " with ",
               w_gate_up.n_rows(), " rows and ", n_tokens, " tokens");
  run_kquant(w_gate_up, x, n_tokens, out, w_gate_up.n_rows() / 2, stream);
}

}  // namespace strata
