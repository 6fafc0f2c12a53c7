// cuda_decode_attention (cuda_decode_attention.h).
//
// Block (sequence, kv head) of kThreads threads; a block whose sequence is
// not the decode kernel's leaves once the kernels before have finished.
// Shared memory, in floats:
//   stage:  the group's queries times the scale ([group padded to
//           kQueriesAtOnce][d], zeros past the group), later the V slices'
//           partial sums ([n_slices][kQueriesAtOnce][d]);
//   scores: [group][max_keys], overwritten by their exponentials;
//   inv_sums: [kDecodeAttentionMaxGroup].
// Phases, a barrier between each:
// 1. scores: a thread per key reads the key's row (16 bytes at a time) once
//    per kQueriesAtOnce queries;
// 2. softmax: a warp per query finds the max, exponentiates, sums;
// 3. values: thread (slice, quad) sums e[h][key] * V[key][quad .. quad + 3]
//    over keys slice, slice + n_slices, ... for kQueriesAtOnce queries at a
//    time, so every key's V row is read once per group of queries and each
//    thread's chain is keys / n_slices long; the slices' sums are then added
//    in slice order. Every order is fixed by the sequence alone.
// With Q/K/V finishing (cuda_finish_qkv_and_decode_attention), a phase 0
// before them: warps 0 .. group + 1 finish the block's Q heads, its K head
// and its V head (finish_qkv_head, as finish_qkv_kernel does), storing K and
// V in the arena, where phases 1 and 3 read them back. K and V are read with
// plain loads, not __ldg: the read-only path may not see this kernel's own
// writes.
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>

#include "common/check.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_decode_attention.h"
#include "kernels/cuda/cuda_dependent_launch.cuh"
#include "kernels/cuda/cuda_qkv_finish.cuh"
#include "kernels/cuda/cuda_warp_reduce.cuh"

namespace strata {
namespace {

constexpr int kWarps = 32;
constexpr int kThreads = 32 * kWarps;
constexpr int kQueriesAtOnce = 4;
// The stage holds the padded queries or the slices' sums, whichever is more:
// n_slices * d <= 4 * kThreads, so the sums take at most this.
constexpr int kStageFloats = kQueriesAtOnce * 4 * kThreads;
static_assert(kDecodeAttentionMaxGroup * kDecodeAttentionMaxHeadDim <= kStageFloats);
static_assert(kDecodeAttentionMaxGroup + 2 <= kWarps);  // phase 0: a warp a head

struct DecodeParams {
  KvSlots kv;  // the layer's K/V blocks and the step's block tables (cuda_kv_slots)
  int n_heads = 0;
  int group = 0;
  int head_dim = 0;
  int max_keys = 0;  // the scores' row stride: the most keys a taken sequence has
  float scale = 0.0f;
  const float* q = nullptr;  // [n_rows][n_heads][head_dim]
  float* out = nullptr;
  // Phase 0, when `finishing`: finish_qkv_head over qkv's raw projections,
  // writing its q (where q above points), k and v and the arena.
  bool finishing = false;
  bool neox = false;
  DecodeQkvFinish qkv;
};

int64_t smem_bytes(int64_t group, int64_t max_keys) {
  return (kStageFloats + group * max_keys + kDecodeAttentionMaxGroup) * int64_t{sizeof(float)};
}

// Row `key` of K (value: false) or V of kv head `kv_head`: head_dim elements.
template <typename T>
__device__ __forceinline__ const T* key_row(const DecodeParams& p, const int32_t* blocks,
                                            int kv_head, int key, bool value) {
  const std::byte* head = p.kv.kv + int64_t{blocks[key / p.kv.block_tokens]} * p.kv.slot_bytes +
                          kv_head * p.kv.head_bytes + (value ? p.kv.part_bytes : 0);
  return reinterpret_cast<const T*>(head) + (key % p.kv.block_tokens) * p.head_dim;
}

// The two f16 halves of `word` as floats (exactly).
__device__ __forceinline__ float2 widen(uint32_t word) {
  return make_float2(__half2float(__ushort_as_half(static_cast<unsigned short>(word & 0xffffu))),
                     __half2float(__ushort_as_half(static_cast<unsigned short>(word >> 16))));
}

// 8 elements from 16-byte aligned `at`, as floats: v[0..3] and v[4..7].
__device__ __forceinline__ void load8(const __half* at, float4& lo, float4& hi) {
  const uint4 raw = *reinterpret_cast<const uint4*>(at);
  const float2 a = widen(raw.x), b = widen(raw.y), c = widen(raw.z), d = widen(raw.w);
  lo = make_float4(a.x, a.y, b.x, b.y);
  hi = make_float4(c.x, c.y, d.x, d.y);
}
__device__ __forceinline__ void load8(const float* at, float4& lo, float4& hi) {
  lo = *reinterpret_cast<const float4*>(at);
  hi = *reinterpret_cast<const float4*>(at + 4);
}

// 4 elements from `at` (8-byte aligned f16, 16-byte aligned f32).
__device__ __forceinline__ float4 load4(const __half* at) {
  const uint2 raw = *reinterpret_cast<const uint2*>(at);
  const float2 lo = widen(raw.x), hi = widen(raw.y);
  return make_float4(lo.x, lo.y, hi.x, hi.y);
}
__device__ __forceinline__ float4 load4(const float* at) {
  return *reinterpret_cast<const float4*>(at);
}

__device__ __forceinline__ float dot4(float4 a, float4 b, float sum) {
  return fmaf(a.w, b.w, fmaf(a.z, b.z, fmaf(a.y, b.y, fmaf(a.x, b.x, sum))));
}
__device__ __forceinline__ float4 axpy4(float w, float4 x, float4 acc) {
  return make_float4(fmaf(w, x.x, acc.x), fmaf(w, x.y, acc.y), fmaf(w, x.z, acc.z),
                     fmaf(w, x.w, acc.w));
}

// Phase 1: scores[h][key] = queries[h] . K[key] for the sequence's keys.
template <typename T>
__device__ void score_keys(const DecodeParams& p, const int32_t* blocks, int kv_head, int n_keys,
                           const float* queries, float* scores) {
  const int d = p.head_dim;
  for (int key = static_cast<int>(threadIdx.x); key < n_keys; key += kThreads) {
    const T* k = key_row<T>(p, blocks, kv_head, key, false);
    for (int h0 = 0; h0 < p.group; h0 += kQueriesAtOnce) {
      float s[kQueriesAtOnce] = {};
#pragma unroll 4
      for (int c = 0; c < d; c += 8) {
        float4 lo, hi;
        load8(k + c, lo, hi);
#pragma unroll
        for (int h = 0; h < kQueriesAtOnce; ++h) {
          // Every lane reads the same address: a broadcast.
          const float4* q = reinterpret_cast<const float4*>(queries + (h0 + h) * d + c);
          s[h] = dot4(q[1], hi, dot4(q[0], lo, s[h]));
        }
      }
#pragma unroll
      for (int h = 0; h < kQueriesAtOnce; ++h) {
        if (h0 + h < p.group) scores[(h0 + h) * p.max_keys + key] = s[h];
      }
    }
  }
}

// Phase 2: each query's scores become exp(score - max); inv_sums[h] = 1 / their sum.
__device__ void softmax_rows(const DecodeParams& p, int n_keys, float* scores, float* inv_sums) {
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  for (int h = warp; h < p.group; h += kWarps) {
    float* s = scores + h * p.max_keys;
    float m = -INFINITY;
    for (int key = lane; key < n_keys; key += 32) m = fmaxf(m, s[key]);
    m = warp_max(m);
    float sum = 0.0f;
    for (int key = lane; key < n_keys; key += 32) {
      const float e = expf(s[key] - m);
      s[key] = e;
      sum += e;
    }
    sum = warp_sum(sum);
    if (lane == 0) inv_sums[h] = 1.0f / sum;
  }
}

// Phase 3: out[h][c] = sum_key e[h][key] V[key][c] * inv_sums[h], for
// kQueriesAtOnce queries at a time (`sums` is the stage).
template <typename T>
__device__ void weigh_values(const DecodeParams& p, const int32_t* blocks, int kv_head, int n_keys,
                             const float* exps, const float* inv_sums, float* sums, float* out) {
  const int d = p.head_dim, quads = d / 4, n_slices = kThreads / quads;
  const int slice = static_cast<int>(threadIdx.x) / quads;
  const int c = (static_cast<int>(threadIdx.x) % quads) * 4;
  for (int h0 = 0; h0 < p.group; h0 += kQueriesAtOnce) {
    const int n_h = min(kQueriesAtOnce, p.group - h0);
    if (slice < n_slices) {
      float4 acc[kQueriesAtOnce] = {};
#pragma unroll 4
      for (int key = slice; key < n_keys; key += n_slices) {
        const float4 x = load4(key_row<T>(p, blocks, kv_head, key, true) + c);
#pragma unroll
        for (int h = 0; h < kQueriesAtOnce; ++h) {
          const float w = h < n_h ? exps[(h0 + h) * p.max_keys + key] : 0.0f;
          acc[h] = axpy4(w, x, acc[h]);
        }
      }
#pragma unroll
      for (int h = 0; h < kQueriesAtOnce; ++h) {
        *reinterpret_cast<float4*>(sums + (slice * kQueriesAtOnce + h) * d + c) = acc[h];
      }
    }
    __syncthreads();
    for (int o = static_cast<int>(threadIdx.x); o < n_h * d; o += kThreads) {
      const int h = o / d, e = o % d;
      float total = 0.0f;
      for (int s = 0; s < n_slices; ++s) total += sums[(s * kQueriesAtOnce + h) * d + e];
      out[(h0 + h) * d + e] = total * inv_sums[h0 + h];
    }
    __syncthreads();  // the next queries' sums overwrite these
  }
}

// Phase 0: warp i < group finishes query head kv_head * group + i of the
// row, warp group its K head, warp group + 1 its V head.
__device__ void finish_own_heads(const DecodeParams& p, int row, int kv_head) {
  const int warp = static_cast<int>(threadIdx.x / 32);
  int64_t head;
  if (warp < p.group) {
    head = int64_t{kv_head} * p.group + warp;
  } else if (warp == p.group) {
    head = p.n_heads + kv_head;
  } else if (warp == p.group + 1) {
    head = p.n_heads + p.qkv.finish.n_kv_heads + kv_head;
  } else {
    return;
  }
  finish_qkv_head(p.qkv.in, p.qkv.finish, p.neox, row, head, p.qkv.q, p.qkv.k, p.qkv.v);
}

template <typename T>
__global__ void __launch_bounds__(kThreads) decode_attention_kernel(const DecodeParams p) {
  extern __shared__ __align__(16) float smem[];
  let_next_kernel_start();
  const int seq = static_cast<int>(blockIdx.x), kv_head = static_cast<int>(blockIdx.y);
  // The step's metadata (copied in before its first kernel), while the
  // kernel before finishes.
  const int first_row = p.kv.seq_first_row[seq];
  const int n_rows = p.kv.seq_first_row[seq + 1] - first_row;
  const int n_keys = p.kv.seq_n_past[seq] + n_rows;
  const int32_t* blocks = p.kv.block_ids + p.kv.seq_block_start[seq];
  wait_for_prior_kernels();  // q and the row's own K/V are earlier kernels'
  if (!decode_attention_takes_sequence(n_rows, n_keys)) return;  // the tile kernels' sequence
  if (p.finishing) {
    finish_own_heads(p, first_row, kv_head);
    __syncthreads();  // the finished q and the row's K/V, for every thread of the block
  }

  const int d = p.head_dim;
  float* stage = smem;
  float* scores = smem + kStageFloats;
  float* inv_sums = scores + p.group * p.max_keys;
  const int64_t first_query = int64_t{first_row} * p.n_heads + int64_t{kv_head} * p.group;
  const float* q = p.q + first_query * d;
  const int padded = (p.group + kQueriesAtOnce - 1) / kQueriesAtOnce * kQueriesAtOnce;
  for (int i = static_cast<int>(threadIdx.x); i < padded * d; i += kThreads) {
    stage[i] = i < p.group * d ? q[i] * p.scale : 0.0f;
  }
  __syncthreads();
  score_keys<T>(p, blocks, kv_head, n_keys, stage, scores);
  __syncthreads();
  softmax_rows(p, n_keys, scores, inv_sums);
  __syncthreads();
  weigh_values<T>(p, blocks, kv_head, n_keys, scores, inv_sums, stage, p.out + first_query * d);
}

}  // namespace

bool cuda_decode_attention_fits(const CudaKvArena& arena, int64_t n_heads) {
  if (arena.n_kv_heads <= 0 || arena.n_kv_heads > 65535 || n_heads % arena.n_kv_heads != 0) {
    return false;
  }
  const auto aligned16 = [](int64_t n) { return n % 16 == 0; };
  return n_heads / arena.n_kv_heads <= kDecodeAttentionMaxGroup && arena.head_dim % 8 == 0 &&
         arena.head_dim <= kDecodeAttentionMaxHeadDim &&
         aligned16(reinterpret_cast<intptr_t>(arena.base)) && aligned16(arena.slot_bytes) &&
         aligned16(arena.layer_bytes) && aligned16(arena.part_bytes) && aligned16(arena.head_bytes);
}

bool cuda_attention_is_decode_only(const CudaKvArena& arena, const CudaAttentionBatch& batch,
                                   int64_t n_heads) {
  return cuda_decode_attention_fits(arena, n_heads) &&
         decode_attention_takes_sequence(batch.max_seq_rows, batch.max_seq_keys);
}

namespace {

// The launch, p's finishing fields already set (or not).
void launch_decode(const CudaKvArena& arena, const CudaAttentionBatch& batch, int64_t layer,
                   int64_t n_heads, DecodeParams p, cudaStream_t stream) {
  STRATA_CHECK(cuda_decode_attention_fits(arena, n_heads), "head_dim ", arena.head_dim,
               " and GQA group ", n_heads / std::max<int64_t>(arena.n_kv_heads, 1),
               " are not the decode kernel's");
  p.kv = cuda_kv_slots(arena, batch, layer);  // checks both
  STRATA_CHECK(batch.n_seqs <= INT32_MAX, batch.n_seqs, " sequences");
  if (batch.n_rows == 0) return;
  const int group = static_cast<int>(n_heads / arena.n_kv_heads);
  const int64_t max_keys = std::min(batch.max_seq_keys, kDecodeAttentionMaxKeys);
  p.n_heads = static_cast<int>(n_heads);
  p.group = group;
  p.head_dim = static_cast<int>(arena.head_dim);
  p.max_keys = static_cast<int>(max_keys);
  const int64_t bytes = smem_bytes(group, max_keys);
  const dim3 grid(static_cast<unsigned>(batch.n_seqs), static_cast<unsigned>(arena.n_kv_heads));
  const auto launch = [&](auto kernel) {
    if (bytes > (48 << 10)) {
      STRATA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(bytes)));
    }
    launch_dependent(kernel, grid, dim3(kThreads), static_cast<size_t>(bytes), stream, p);
  };
  if (arena.dtype == WeightType::kF16) {
    launch(decode_attention_kernel<__half>);
  } else {
    launch(decode_attention_kernel<float>);
  }
}

}  // namespace

void cuda_decode_attention(const CudaKvArena& arena, const CudaAttentionBatch& batch, int64_t layer,
                           int64_t n_heads, float scale, const float* q, float* out,
                           cudaStream_t stream) {
  launch_decode(arena, batch, layer, n_heads, {.scale = scale, .q = q, .out = out}, stream);
}

void cuda_finish_qkv_and_decode_attention(const CudaKvArena& arena,
                                          const CudaAttentionBatch& batch, int64_t layer,
                                          const DecodeQkvFinish& finish, float scale, float* out,
                                          cudaStream_t stream) {
  const QkvFinish& f = finish.finish;
  STRATA_CHECK(cuda_attention_is_decode_only(arena, batch, f.n_heads),
               "a step with prefill rows or long sequences is not the decode kernel's alone");
  STRATA_CHECK(f.n_rows == batch.n_rows && f.n_kv_heads == arena.n_kv_heads &&
                   f.head_dim == arena.head_dim &&
                   f.kv_out.kv == cuda_kv_slots(arena, batch, layer).kv,
               "Q/K/V finishing must match the arena and write K and V into its layer");
  launch_decode(arena, batch, layer, f.n_heads,
                {.scale = scale,
                 .q = finish.q,
                 .out = out,
                 .finishing = true,
                 .neox = f.style == RopeStyle::kNeox,
                 .qkv = finish},
                stream);
}

}  // namespace strata
