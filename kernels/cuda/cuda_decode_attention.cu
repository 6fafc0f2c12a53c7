// cuda_decode_attention (cuda_decode_attention.h).
//
// Block (sequence, kv head, split) of kThreads threads takes keys
// [split * kSplitKeys, + kSplitKeys) of its sequence; a block whose sequence
// is not the decode kernel's, or has fewer splits, leaves once the kernels
// before have finished. Before it waits for them, each thread loads its
// chunks of the split's past K and V rows into registers (SplitRows: what
// phases 1 and 3 read; earlier steps wrote them), so that at a few hundred
// keys the kernel's longest loads overlap the kernel before it; the new
// row's chunks follow phase 0. Phases, a barrier between each:
// 0. queries: the group's queries times the scale into shared memory (zeros
//    past the group, to a multiple of kQueriesAtOnce). With Q/K/V finishing
//    (cuda_finish_qkv_and_decode_attention) every block finishes its Q heads
//    there itself (finish_qkv_head_into, as finish_qkv_kernel does), and the
//    block of the last split, which holds the new row, also its K and V
//    head, storing them in the arena where phases 1 and 3 read them back, and
//    the finished q in its compact place. K and V are read with plain loads,
//    not __ldg: the read-only path may not see this kernel's own writes.
// 1. scores: kKeyParts threads a key, each dotting the queries with 16-byte
//    chunks part, part + kKeyParts, ... of the key's row (all of them in
//    flight at head_dim 128), added across the key's threads in a fixed order;
// 2. softmax: a warp a query finds the split's max, exponentiates, sums;
// 3. values: thread (slice, octet) sums e[h][key] * V[key][8 octet .. + 7]
//    over keys slice, slice + n_slices, ... for kQueriesAtOnce queries at a
//    time, so every V row is read once per group of queries; the slices'
//    sums are then added in slice order.
// One split writes out; with more, each writes its max, sum and unnormalised
// values to the scratch, and the last block of the (sequence, kv head) to
// count itself done adds them in split order and sets the counter back to
// zero. Every order is fixed by the sequence alone.
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>

#include "common/check.h"
#include "gpu/cuda_check.h"
#include "gpu/cuda_device.h"
#include "kernels/cuda/cuda_decode_attention.h"
#include "kernels/cuda/cuda_dependent_launch.cuh"
#include "kernels/cuda/cuda_qkv_finish.cuh"
#include "kernels/cuda/cuda_warp_reduce.cuh"

namespace strata {
namespace {

constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;
constexpr int kSplitKeys = static_cast<int>(kDecodeAttentionSplitKeys);
constexpr int kMaxSplits = static_cast<int>(kDecodeAttentionMaxSplits);
constexpr int kKeyParts = kThreads / kSplitKeys;  // threads a key in phase 1
constexpr int kQueriesAtOnce = 4;
constexpr int kMaxGroup = static_cast<int>(kDecodeAttentionMaxGroup);
constexpr int kMaxHeadDim = static_cast<int>(kDecodeAttentionMaxHeadDim);
constexpr int kQueryFloats = kMaxGroup * kMaxHeadDim;  // kMaxGroup: a multiple of kQueriesAtOnce
// Phase 3's slice sums: n_slices * head_dim = (kThreads / octets) * 8 * octets <= 8 * kThreads.
constexpr int kSliceSumFloats = kQueriesAtOnce * 8 * kThreads;
static_assert(kThreads % kSplitKeys == 0 && kMaxGroup % kQueriesAtOnce == 0);

struct DecodeParams {
  KvSlots kv;  // the layer's K/V blocks and the step's block tables (cuda_kv_slots)
  int n_heads = 0;
  int n_kv_heads = 0;
  int group = 0;
  int head_dim = 0;
  float scale = 0.0f;
  const float* q = nullptr;  // [n_rows][n_heads][head_dim]
  float* out = nullptr;
  // [n_seqs][n_kv_heads][kMaxSplits] partials of group * (head_dim + 2)
  // floats: values [group][head_dim], maxes [group], sums [group].
  float* partials = nullptr;
  int32_t* counters = nullptr;  // [n_seqs][n_kv_heads]
  // Phase 0, when `finishing`: finish_qkv_head_into over qkv's raw
  // projections, writing q (where q above points), k, v and the arena.
  bool finishing = false;
  bool neox = false;
  DecodeQkvFinish qkv;
};

struct SharedMemory {
  float queries[kQueryFloats];                   // [padded group][head_dim], times the scale
  float scores[kMaxGroup * kSplitKeys];          // [group][kSplitKeys], then their exponentials
  float slice_sums[kSliceSumFloats];             // [n_slices][kQueriesAtOnce][head_dim]
  float maxes[kMaxGroup], sums[kMaxGroup];       // the split's, per query
  bool merges;                                   // this block adds the splits
};

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

// 8 elements of a K or V row: 16 bytes of f16, 32 of f32.
template <typename T>
struct Chunk {
  uint4 raw[sizeof(T) / 2];
};

// The chunk at 16-byte aligned `at`. Plain loads, not __ldg: the read-only
// path may not see this kernel's own writes of the new row.
template <typename T>
__device__ __forceinline__ Chunk<T> load_chunk(const T* at) {
  Chunk<T> c;
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(T) / 2); ++i) {
    c.raw[i] = reinterpret_cast<const uint4*>(at)[i];
  }
  return c;
}

// A chunk's 8 elements as floats: v[0..3] and v[4..7].
__device__ __forceinline__ void widen8(const Chunk<__half>& c, float4& lo, float4& hi) {
  const float2 a = widen(c.raw[0].x), b = widen(c.raw[0].y);
  const float2 d = widen(c.raw[0].z), e = widen(c.raw[0].w);
  lo = make_float4(a.x, a.y, b.x, b.y);
  hi = make_float4(d.x, d.y, e.x, e.y);
}
__device__ __forceinline__ void widen8(const Chunk<float>& c, float4& lo, float4& hi) {
  lo = make_float4(__uint_as_float(c.raw[0].x), __uint_as_float(c.raw[0].y),
                   __uint_as_float(c.raw[0].z), __uint_as_float(c.raw[0].w));
  hi = make_float4(__uint_as_float(c.raw[1].x), __uint_as_float(c.raw[1].y),
                   __uint_as_float(c.raw[1].z), __uint_as_float(c.raw[1].w));
}

__device__ __forceinline__ float dot4(float4 a, float4 b, float sum) {
  return fmaf(a.w, b.w, fmaf(a.z, b.z, fmaf(a.y, b.y, fmaf(a.x, b.x, sum))));
}
__device__ __forceinline__ float4 axpy4(float w, float4 x, float4 acc) {
  return make_float4(fmaf(w, x.x, acc.x), fmaf(w, x.y, acc.y), fmaf(w, x.z, acc.z),
                     fmaf(w, x.w, acc.w));
}

// The block's place: which keys of which sequence and kv head.
struct Split {
  int seq, kv_head, split;
  int first_row;     // the sequence's one new row
  int n_splits;      // the sequence's
  int first_key;     // split * kSplitKeys
  int n_keys;        // this split's
  const int32_t* blocks;  // the sequence's block table
  int64_t first_query;    // the row's first query head of this kv head, counting all rows' heads
  int new_key;            // the split's key that is this step's new row, or -1
};

// A thread's chunks of the split's rows, held in registers: of K (phase 1),
// chunks at elements 8 part + 8 kKeyParts j of its key; of V (phase 3),
// elements c .. c + 7 of keys slice + n_slices j. Both need ceil(head_dim /
// 32) chunks (n_slices = kThreads / (head_dim / 8)), at most kChunks: the
// kernel's template parameter.
template <typename T, int kChunks>
struct SplitRows {
  Chunk<T> k[kChunks];
  Chunk<T> v[kChunks];
};

// Loads the thread's chunks of the split's keys for which wanted(key)
// holds (key counted from the split's first), leaving the others as they
// are.
template <typename T, int kChunks, typename Wanted>
__device__ void load_rows(const DecodeParams& p, const Split& at, Wanted wanted,
                          SplitRows<T, kChunks>& rows) {
  const int d = p.head_dim, tid = static_cast<int>(threadIdx.x);
  const int key = tid / kKeyParts, part = tid % kKeyParts;
  if (key < at.n_keys && wanted(key)) {
    const T* k = key_row<T>(p, at.blocks, at.kv_head, at.first_key + key, false);
#pragma unroll
    for (int j = 0; j < kChunks; ++j) {
      const int c = 8 * part + 8 * kKeyParts * j;
      if (c < d) rows.k[j] = load_chunk(k + c);
    }
  }
  const int octets = d / 8, n_slices = kThreads / octets;
  const int slice = tid / octets, c = (tid % octets) * 8;
  if (slice >= n_slices) return;
#pragma unroll
  for (int j = 0; j < kChunks; ++j) {
    const int value_key = slice + n_slices * j;
    if (value_key < at.n_keys && wanted(value_key)) {
      rows.v[j] =
          load_chunk(key_row<T>(p, at.blocks, at.kv_head, at.first_key + value_key, true) + c);
    }
  }
}

// Phase 0: the group's queries times the scale into s.queries, zeros past
// the group; with finishing, the block's Q heads finished there first (and
// by the last split, its K and V heads and the compact q as well).
__device__ void stage_queries(const DecodeParams& p, const Split& at, SharedMemory& s) {
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int d = p.head_dim;
  const bool holds_new_row = at.split == at.n_splits - 1;
  const float* q = p.q + at.first_query * d;
  if (p.finishing) {
    const int n_finished = p.group + (holds_new_row ? 2 : 0);  // Q heads, then K and V
    for (int i = warp; i < n_finished; i += kWarps) {
      if (i < p.group) {
        finish_qkv_head_into(p.qkv.in, p.qkv.finish, p.neox, at.first_row,
                             int64_t{at.kv_head} * p.group + i, s.queries + i * d);
      } else {
        const int64_t kv = p.n_heads + int64_t{i - p.group} * p.n_kv_heads + at.kv_head;
        finish_qkv_head(p.qkv.in, p.qkv.finish, p.neox, at.first_row, kv, p.qkv.q, p.qkv.k,
                        p.qkv.v);
      }
    }
    __syncthreads();  // the finished queries, and the new row's K/V for every thread
  }
  const int padded = (p.group + kQueriesAtOnce - 1) / kQueriesAtOnce * kQueriesAtOnce;
  for (int i = static_cast<int>(threadIdx.x); i < padded * d; i += kThreads) {
    float x = 0.0f;
    if (i < p.group * d) {
      x = p.finishing ? s.queries[i] : q[i];
      if (p.finishing && holds_new_row) p.qkv.q[at.first_query * d + i] = x;
    }
    s.queries[i] = x * p.scale;
  }
}

// Phase 1: s.scores[h][key] = queries[h] . K[first_key + key] for the
// split's keys, from the thread's K chunks; the key's kKeyParts threads sit
// side by side in a warp.
template <typename T, int kChunks>
__device__ void score_keys(const DecodeParams& p, const Split& at, const Chunk<T> (&k)[kChunks],
                           SharedMemory& s) {
  const int d = p.head_dim;
  const int key = static_cast<int>(threadIdx.x) / kKeyParts;
  const int part = static_cast<int>(threadIdx.x) % kKeyParts;
  const bool real = key < at.n_keys;
  for (int h0 = 0; h0 < p.group; h0 += kQueriesAtOnce) {
    float dot[kQueriesAtOnce] = {};
    if (real) {
#pragma unroll
      for (int j = 0; j < kChunks; ++j) {
        const int c = 8 * part + 8 * kKeyParts * j;
        if (c >= d) break;
        float4 lo, hi;
        widen8(k[j], lo, hi);
#pragma unroll
        for (int h = 0; h < kQueriesAtOnce; ++h) {
          const float4* q = reinterpret_cast<const float4*>(s.queries + (h0 + h) * d + c);
          dot[h] = dot4(q[1], hi, dot4(q[0], lo, dot[h]));
        }
      }
    }
#pragma unroll
    for (int h = 0; h < kQueriesAtOnce; ++h) {  // the key's parts: (0 + 1) + (2 + 3)
      dot[h] += __shfl_xor_sync(0xffffffffu, dot[h], 1);
      dot[h] += __shfl_xor_sync(0xffffffffu, dot[h], 2);
      if (real && part == 0 && h0 + h < p.group) s.scores[(h0 + h) * kSplitKeys + key] = dot[h];
    }
  }
}

// Phase 2: each query's scores become exp(score - max) over the split;
// s.maxes and s.sums get the max and the exponentials' sum.
__device__ void softmax_split(const DecodeParams& p, const Split& at, SharedMemory& s) {
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  static_assert(kSplitKeys % 32 == 0);
  for (int h = warp; h < p.group; h += kWarps) {
    float* scores = s.scores + h * kSplitKeys;
    float m = -INFINITY;
    for (int key = lane; key < at.n_keys; key += 32) m = fmaxf(m, scores[key]);
    m = warp_max(m);
    float sum = 0.0f;
    for (int key = lane; key < at.n_keys; key += 32) {
      const float e = expf(scores[key] - m);
      scores[key] = e;
      sum += e;
    }
    sum = warp_sum(sum);
    if (lane == 0) {
      s.maxes[h] = m;
      s.sums[h] = sum;
    }
  }
}

// Phase 3, then where the split's result goes: emit(h, c, value) for every
// query h of the group and element c, value = sum_key e[h][key] V[key][c],
// from the thread's V chunks.
template <typename T, int kChunks, typename Emit>
__device__ void weigh_values(const DecodeParams& p, const Split& at, const Chunk<T> (&v)[kChunks],
                             SharedMemory& s, Emit emit) {
  const int d = p.head_dim, octets = d / 8, n_slices = kThreads / octets;
  const int slice = static_cast<int>(threadIdx.x) / octets;
  const int c = (static_cast<int>(threadIdx.x) % octets) * 8;
  for (int h0 = 0; h0 < p.group; h0 += kQueriesAtOnce) {
    const int n_h = min(kQueriesAtOnce, p.group - h0);
    if (slice < n_slices) {
      float4 lo[kQueriesAtOnce] = {}, hi[kQueriesAtOnce] = {};
#pragma unroll
      for (int j = 0; j < kChunks; ++j) {
        const int key = slice + n_slices * j;
        if (key >= at.n_keys) break;
        float4 v_lo, v_hi;
        widen8(v[j], v_lo, v_hi);
#pragma unroll
        for (int h = 0; h < kQueriesAtOnce; ++h) {
          const float w = h < n_h ? s.scores[(h0 + h) * kSplitKeys + key] : 0.0f;
          lo[h] = axpy4(w, v_lo, lo[h]);
          hi[h] = axpy4(w, v_hi, hi[h]);
        }
      }
#pragma unroll
      for (int h = 0; h < kQueriesAtOnce; ++h) {
        float* sums = s.slice_sums + (slice * kQueriesAtOnce + h) * d + c;
        reinterpret_cast<float4*>(sums)[0] = lo[h];
        reinterpret_cast<float4*>(sums)[1] = hi[h];
      }
    }
    __syncthreads();
    for (int o = static_cast<int>(threadIdx.x); o < n_h * d; o += kThreads) {
      const int h = o / d, e = o % d;
      float total = 0.0f;
      for (int i = 0; i < n_slices; ++i) total += s.slice_sums[(i * kQueriesAtOnce + h) * d + e];
      emit(h0 + h, e, total);
    }
    __syncthreads();  // the next queries' sums overwrite these
  }
}

// After every split of the (sequence, kv head) has written its partial:
// out[h][c] = sum over splits of exp(max_s - max) * values_s[h][c], divided
// by the same sum of sums_s, each added in split order. A thread asks for
// all it reads at once (its outputs' values and their query's maxes and
// sums in every split: one round trip to L2), and forms the weights itself.
// Partials are read through L2 (__ldcg): other blocks wrote them.
__device__ void merge_splits(const DecodeParams& p, const Split& at, const float* partials) {
  const int d = p.head_dim;
  const int64_t partial_floats = int64_t{p.group} * (d + 2);
  float* out = p.out + at.first_query * d;
  for (int o = static_cast<int>(threadIdx.x); o < p.group * d; o += kThreads) {
    const int h = o / d;
    float m_split[kMaxSplits], sum_split[kMaxSplits], value[kMaxSplits];
#pragma unroll
    for (int i = 0; i < kMaxSplits; ++i) {
      if (i >= at.n_splits) break;
      const float* split = partials + i * partial_floats;
      m_split[i] = __ldcg(split + p.group * d + h);
      sum_split[i] = __ldcg(split + p.group * d + p.group + h);
      value[i] = __ldcg(split + o);
    }
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < kMaxSplits; ++i) {
      if (i >= at.n_splits) break;
      m = fmaxf(m, m_split[i]);
    }
    float total = 0.0f, sum = 0.0f;
#pragma unroll
    for (int i = 0; i < kMaxSplits; ++i) {
      if (i >= at.n_splits) break;
      const float w = expf(m_split[i] - m);
      total = fmaf(sum_split[i], w, total);
      sum = fmaf(w, value[i], sum);
    }
    out[o] = sum / total;
  }
}

// With more than one split: the split's partial into the scratch, then
// whether this block is the last of its (sequence, kv head) to finish. The
// block's barrier orders its threads' writes before thread 0's fence and
// count, as cooperative groups' grid barrier does.
__device__ bool publish_split(const DecodeParams& p, const Split& at, float* partial,
                              SharedMemory& s) {
  const int d = p.head_dim;
  if (static_cast<int>(threadIdx.x) < p.group) {
    partial[p.group * d + threadIdx.x] = s.maxes[threadIdx.x];
    partial[p.group * d + p.group + threadIdx.x] = s.sums[threadIdx.x];
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();  // the block's partial, before the count that announces it
    int32_t* counter = p.counters + int64_t{at.seq} * p.n_kv_heads + at.kv_head;
    s.merges = atomicAdd(counter, 1) == at.n_splits - 1;
    if (s.merges) {
      *counter = 0;     // for the next launch: every split has counted
      __threadfence();  // the other splits' partials, after their count
    }
  }
  __syncthreads();
  return s.merges;
}

// kBlocksAnSm: the blocks an SM the registers must leave room for. One for
// grids of at most a block an SM (a few sequences), where the merge's loads,
// all in flight at once, take ~150 registers (f16 K/V, head_dim 128); two
// for larger grids, where residency matters more than the merge (which then
// spills a little at head_dim 256 or with f32 K/V). Both run the same
// arithmetic: which one a step launches does not change a sequence's bits.
template <typename T, int kChunks, int kBlocksAnSm>
__global__ void __launch_bounds__(kThreads, kBlocksAnSm)
    decode_attention_kernel(const DecodeParams p) {
  __shared__ SharedMemory s;
  let_next_kernel_start();
  Split at;
  at.seq = static_cast<int>(blockIdx.x);
  at.kv_head = static_cast<int>(blockIdx.y);
  at.split = static_cast<int>(blockIdx.z);
  // The step's metadata (copied in before its first kernel), while the
  // kernel before finishes.
  at.first_row = p.kv.seq_first_row[at.seq];
  const int n_rows = p.kv.seq_first_row[at.seq + 1] - at.first_row;
  const int n_keys = p.kv.seq_n_past[at.seq] + n_rows;
  at.n_splits = (n_keys + kSplitKeys - 1) / kSplitKeys;
  at.first_key = at.split * kSplitKeys;
  at.n_keys = min(kSplitKeys, n_keys - at.first_key);
  at.new_key = at.split == at.n_splits - 1 ? at.n_keys - 1 : -1;
  at.blocks = p.kv.block_ids + p.kv.seq_block_start[at.seq];
  at.first_query = int64_t{at.first_row} * p.n_heads + int64_t{at.kv_head} * p.group;
  const bool takes = decode_attention_takes_sequence(n_rows, n_keys) && at.split < at.n_splits;
  // The past keys' K and V too: earlier steps wrote them. Their loads are
  // most of a split's time at a few hundred keys, and go out here, while
  // the kernel before finishes, instead of after it.
  const auto is_past = [&](int key) { return key != at.new_key; };
  const auto is_new = [&](int key) { return key == at.new_key; };
  SplitRows<T, kChunks> rows;
  if (takes) load_rows(p, at, is_past, rows);
  wait_for_prior_kernels();  // q and the row's own K/V are earlier kernels'
  if (!takes) return;

  stage_queries(p, at, s);
  __syncthreads();
  load_rows(p, at, is_new, rows);  // phase 0 finished it
  score_keys(p, at, rows.k, s);
  __syncthreads();
  softmax_split(p, at, s);
  __syncthreads();
  const int d = p.head_dim;
  if (at.n_splits == 1) {
    float* out = p.out + at.first_query * d;
    weigh_values(p, at, rows.v, s, [&](int h, int c, float v) { out[h * d + c] = v / s.sums[h]; });
    return;
  }
  const int64_t partial_floats = int64_t{p.group} * (d + 2);
  float* partials =
      p.partials + (int64_t{at.seq} * p.n_kv_heads + at.kv_head) * kMaxSplits * partial_floats;
  float* partial = partials + at.split * partial_floats;
  weigh_values(p, at, rows.v, s, [&](int h, int c, float v) { partial[h * d + c] = v; });
  if (publish_split(p, at, partial, s)) merge_splits(p, at, partials);
}

// decode_attention_kernel for the arena's element type, holding enough
// chunks of K and V for its head_dim.
template <typename T>
void launch_decode_kernel(dim3 grid, int64_t head_dim, const DecodeParams& p, cudaStream_t stream) {
  static_assert(kMaxHeadDim <= 8 * 32);  // 8 chunks: ceil(head_dim / 32)
  const bool one_an_sm = int64_t{grid.x} * grid.y * grid.z <= int64_t{cuda_multiprocessor_count()};
  const auto launch = [&](auto kernel) {
    launch_dependent(kernel, grid, dim3(kThreads), 0, stream, p);
  };
  if (head_dim <= 4 * 32) {
    one_an_sm ? launch(decode_attention_kernel<T, 4, 1>) : launch(decode_attention_kernel<T, 4, 2>);
  } else {
    one_an_sm ? launch(decode_attention_kernel<T, 8, 1>) : launch(decode_attention_kernel<T, 8, 2>);
  }
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

int64_t partials_size(int64_t n_seqs, int64_t n_heads, int64_t head_dim) {
  return n_seqs * n_heads * kMaxSplits * (head_dim + 2) * int64_t{sizeof(float)};
}

int64_t counters_size(int64_t n_seqs, int64_t n_kv_heads) {
  return n_seqs * n_kv_heads * int64_t{sizeof(int32_t)};
}

}  // namespace

bool CudaDecodeScratch::fits(int64_t n_seqs, int64_t n_heads, int64_t n_kv_heads,
                             int64_t head_dim) const {
  return partials_size(n_seqs, n_heads, head_dim) <= static_cast<int64_t>(partials_.bytes()) &&
         counters_size(n_seqs, n_kv_heads) <= static_cast<int64_t>(counters_.bytes());
}

bool CudaDecodeScratch::reserve(int64_t n_seqs, int64_t n_heads, int64_t n_kv_heads,
                                int64_t head_dim, cudaStream_t stream) {
  if (fits(n_seqs, n_heads, n_kv_heads, head_dim)) return false;
  partials_.reserve(static_cast<size_t>(partials_size(n_seqs, n_heads, head_dim)));
  const auto counters = static_cast<size_t>(counters_size(n_seqs, n_kv_heads));
  if (counters > counters_.bytes()) {
    counters_.reserve(counters);
    STRATA_CUDA_CHECK(cudaMemsetAsync(counters_.data(), 0, counters_.bytes(), stream));
  }
  return true;
}

namespace {

// The launch, p's finishing fields already set (or not).
void launch_decode(const CudaKvArena& arena, const CudaAttentionBatch& batch, int64_t layer,
                   int64_t n_heads, CudaDecodeScratch& scratch, DecodeParams p,
                   cudaStream_t stream) {
  STRATA_CHECK(cuda_decode_attention_fits(arena, n_heads), "head_dim ", arena.head_dim,
               " and GQA group ", n_heads / std::max<int64_t>(arena.n_kv_heads, 1),
               " are not the decode kernel's");
  p.kv = cuda_kv_slots(arena, batch, layer);  // checks both
  STRATA_CHECK(batch.n_seqs <= INT32_MAX, batch.n_seqs, " sequences");
  STRATA_CHECK(scratch.fits(batch.n_seqs, n_heads, arena.n_kv_heads, arena.head_dim),
               "the decode attention scratch has no room for ", batch.n_seqs,
               " sequences: reserve it first");
  if (batch.n_rows == 0) return;
  p.n_heads = static_cast<int>(n_heads);
  p.n_kv_heads = static_cast<int>(arena.n_kv_heads);
  p.group = static_cast<int>(n_heads / arena.n_kv_heads);
  p.head_dim = static_cast<int>(arena.head_dim);
  p.partials = scratch.partials();
  p.counters = scratch.counters();
  // Splits enough for the sequence with the most keys the kernel takes;
  // each block finds its own sequence's count.
  const int64_t max_keys = std::min(batch.max_seq_keys, kDecodeAttentionMaxKeys);
  const int64_t n_splits = std::max<int64_t>(1, (max_keys + kSplitKeys - 1) / kSplitKeys);
  const dim3 grid(static_cast<unsigned>(batch.n_seqs), static_cast<unsigned>(arena.n_kv_heads),
                  static_cast<unsigned>(n_splits));
  if (arena.dtype == WeightType::kF16) {
    launch_decode_kernel<__half>(grid, arena.head_dim, p, stream);
  } else {
    launch_decode_kernel<float>(grid, arena.head_dim, p, stream);
  }
}

}  // namespace

void cuda_decode_attention(const CudaKvArena& arena, const CudaAttentionBatch& batch, int64_t layer,
                           int64_t n_heads, float scale, const float* q, float* out,
                           CudaDecodeScratch& scratch, cudaStream_t stream) {
  launch_decode(arena, batch, layer, n_heads, scratch,
                {.scale = scale, .q = q, .out = out}, stream);
}

void cuda_finish_qkv_and_decode_attention(const CudaKvArena& arena,
                                          const CudaAttentionBatch& batch, int64_t layer,
                                          const DecodeQkvFinish& finish, float scale, float* out,
                                          CudaDecodeScratch& scratch, cudaStream_t stream) {
  const QkvFinish& f = finish.finish;
  STRATA_CHECK(cuda_attention_is_decode_only(arena, batch, f.n_heads),
               "a step with prefill rows or long sequences is not the decode kernel's alone");
  STRATA_CHECK(f.n_rows == batch.n_rows && f.n_kv_heads == arena.n_kv_heads &&
                   f.head_dim == arena.head_dim &&
                   f.kv_out.kv == cuda_kv_slots(arena, batch, layer).kv,
               "Q/K/V finishing must match the arena and write K and V into its layer");
  launch_decode(arena, batch, layer, f.n_heads, scratch,
                {.scale = scale,
                 .q = finish.q,
                 .out = out,
                 .finishing = true,
                 .neox = f.style == RopeStyle::kNeox,
                 .qkv = finish},
                stream);
}

}  // namespace strata
