// Paged attention and K/V writes on CUDA (kernels/cuda/cuda_attention.h).
//
// One thread block is one work item: (a tile of one sequence's rows, a kv
// head, a part of the keys). Its queries are the tile's rows times the kv
// head's GQA group of query heads, so the whole group shares each K/V tile
// the block stages in shared memory. Online softmax (FlashAttention-2): each
// query keeps a running max m, sum l and unnormalised output o, rescaled as
// the keys stream past.
//
// Grid: x = tile slots (the batch's tiles, packed over sequences; the longest
//       tile of each sequence first), y = key part, z = kv head.
// Split-K (flash-decoding): when the batch has too few items to fill the GPU
// (decode of a few long sequences), keys are cut into parts of part_keys;
// each part writes (m, l, o) to the workspace and combine_parts_kernel merges
// them. Part i of a row at position pos exists iff i * part_keys <= pos, so
// every part the combine reads holds at least one visible key.
//
// Sequences with one row over a short context are cuda_decode_attention's
// (cuda_decode_attention.h) where the model fits it: launched first, and the
// tile kernels and the combine skip them. For the rest, two kernels, one
// launch per call:
// - attention_mma_kernel: f16 K/V, head_dim 64 or 128. Tensor cores
//   (mma.sync m16n8k16, f32 accumulate); 4 warps x 16 queries, 64-key stages
//   double-buffered with cp.async. A tile with few queries (decode: 1 row x
//   group) gives its 16 queries to every warp and splits the stage's keys
//   over the warps instead, merging their states at the end. q * scale and
//   the probabilities p are each split into two f16 halves (hi + lo), so the
//   products keep ~22 bits: results track the f32 CPU reference to ~1e-5
//   rather than f16's ~1e-3, for twice the (cheap) mma count.
// - attention_fma_kernel: any other case (f32 K/V, other even head dims up to
//   256): plain f32 FMA on tiles of 16 queries x 32 keys in shared memory.
#include "kernels/cuda/cuda_attention.h"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/check.h"
#include "gpu/cuda_check.h"
#include "gpu/cuda_device.h"
#include "kernels/cuda/cuda_decode_attention.h"
#include "kernels/cuda/cuda_dependent_launch.cuh"
#include "kernels/cuda/cuda_kv_slots.cuh"
#include "kernels/cuda/cuda_warp_reduce.cuh"

namespace strata {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;  // every kernel here
constexpr unsigned kFullMask = 0xffffffffu;

constexpr int kMaxHeadDim = 256;
constexpr int kMaxParts = 64;       // grid.y; more parts than this buys nothing
constexpr int kMinPartKeys = 256;   // a part amortises its queries' load and its partial write
constexpr int kPartKeysAlign = 64;  // parts start on a stage boundary of both kernels
constexpr int64_t kMaxWorkspaceBytes = int64_t{256} << 20;

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
__host__ __device__ constexpr int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }


// The shift for exp(s - shift) once the running max is `m`: a query that has
// seen no visible key yet has m = -inf, and exp(-inf - -inf) would be NaN.
__device__ __forceinline__ float softmax_shift(float m) { return m == -INFINITY ? 0.0f : m; }

// ---------------------------------------------------------------------------
// cuda_write_kv

struct KvWriteParams {
  KvSlots slots;
  const float* k = nullptr;  // [n_rows][n_kv_heads * head_dim]
  const float* v = nullptr;
  int64_t kv_dim = 0;  // n_kv_heads * head_dim
  int head_dim = 0;
  int64_t n_pairs = 0;  // n_rows * kv_dim / 2
};

// One thread per pair of adjacent elements (head_dim is even, so a pair never
// straddles two heads) of one row's K and the same pair of its V.
__global__ void __launch_bounds__(kThreads) write_kv_kernel(const KvWriteParams p) {
  let_next_kernel_start();
  const int64_t pair = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (pair >= p.n_pairs) {
    wait_for_prior_kernels();
    return;
  }
  // The address from the step's metadata (copied in before its first
  // kernel) while the kernel before finishes; then its K and V.
  const int64_t e = 2 * pair;  // element index into k and v
  const int64_t row = e / p.kv_dim;
  const int col = static_cast<int>(e - row * p.kv_dim);
  const int head = col / p.head_dim;
  std::byte* key = kv_key_head(p.slots, row, head);
  wait_for_prior_kernels();
  const int c = col - head * p.head_dim;
  store_kv_pair(p.slots, key, c, *reinterpret_cast<const float2*>(p.k + e));
  store_kv_pair(p.slots, key + p.slots.part_bytes, c, *reinterpret_cast<const float2*>(p.v + e));
}

// ---------------------------------------------------------------------------
// Work items, shared by both attention kernels

struct AttentionParams {
  const std::byte* kv = nullptr;  // arena base + layer * layer_bytes
  int64_t slot_bytes = 0;
  int64_t head_bytes = 0;  // between kv heads
  int64_t part_bytes = 0;  // from K to V
  int64_t row_bytes = 0;   // between tokens
  int block_tokens = 0;
  const int32_t* block_ids = nullptr;
  const int32_t* seq_block_start = nullptr;
  const int32_t* seq_first_row = nullptr;
  const int32_t* seq_n_past = nullptr;
  int n_seqs = 0;
  int n_heads = 0;
  int group = 0;  // query heads per kv head
  int head_dim = 0;
  int rows_per_tile = 0;  // a tile holds rows_per_tile * group queries
  float scale = 0.0f;
  const float* q = nullptr;  // [n_rows][n_heads][head_dim]
  float* out = nullptr;      // [n_rows][n_heads][head_dim]
  int part_keys = 0;         // keys per part
  int n_parts = 1;           // parts of the longest sequence (grid.y)
  // Split-K partial results, null when n_parts == 1 (results go to out).
  float* part_acc = nullptr;  // [n_rows][n_heads][n_parts][head_dim], unnormalised o
  float* part_ml = nullptr;   // [n_rows][n_heads][n_parts][2]: m, l
  // Sequences that decode_attention_takes_sequence are cuda_decode_attention's.
  bool short_decodes_elsewhere = false;
};

// Whether sequence `seq` is left to cuda_decode_attention.
__device__ __forceinline__ bool decoded_elsewhere(const AttentionParams& p, int seq) {
  if (!p.short_decodes_elsewhere) return false;
  const int rows = p.seq_first_row[seq + 1] - p.seq_first_row[seq];
  return decode_attention_takes_sequence(rows, p.seq_n_past[seq] + rows);
}

struct WorkItem {
  const int32_t* blocks = nullptr;  // the sequence's block table
  int kv_head = 0;
  int part = 0;
  int first_row = 0;  // batch row of the tile's first row
  int n_rows = 0;     // rows in the tile
  int first_pos = 0;  // position of the tile's first row
  int key_begin = 0;  // this item's keys: [key_begin, key_end)
  int key_end = 0;
};

// Finds which tile of which sequence tile slot `slot` is, sequence s having
// ceil(rows_s / rows_per_tile) tiles, by a block-wide prefix sum over the
// sequences. Within a sequence the last (longest, causal) tile comes first
// so that it does not start last. Every thread gets the same answer; false
// when the slot is past the batch's last tile. Call from all threads.
__device__ bool locate_tile(const int32_t* seq_first_row, int n_seqs, int rows_per_tile, int slot,
                            int& seq, int& tile) {
  __shared__ int found[2];
  __shared__ int warp_tiles[kWarps];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (threadIdx.x == 0) found[0] = -1;
  __syncthreads();
  int before_chunk = 0;  // tiles of the sequences before this chunk of kThreads
  for (int base = 0; base < n_seqs; base += kThreads) {
    const int s = base + threadIdx.x;
    const int n = s < n_seqs ? ceil_div(seq_first_row[s + 1] - seq_first_row[s], rows_per_tile) : 0;
    int inclusive = n;
    for (int offset = 1; offset < 32; offset *= 2) {
      const int x = __shfl_up_sync(kFullMask, inclusive, offset);
      if (lane >= offset) inclusive += x;
    }
    if (lane == 31) warp_tiles[warp] = inclusive;
    __syncthreads();
    int first = before_chunk + inclusive - n;  // tiles before sequence s
    for (int w = 0; w < kWarps; ++w) {
      if (w < warp) first += warp_tiles[w];
      before_chunk += warp_tiles[w];
    }
    if (slot >= first && slot < first + n) {
      found[0] = s;
      found[1] = n - 1 - (slot - first);
    }
    __syncthreads();  // found is visible; warp_tiles may be rewritten
  }
  seq = found[0];
  tile = found[1];
  return seq >= 0;
}

// This block's work item; false (for every thread) when it has none.
__device__ bool find_work(const AttentionParams& p, WorkItem& w) {
  int seq = 0;
  int tile = 0;
  if (!locate_tile(p.seq_first_row, p.n_seqs, p.rows_per_tile, static_cast<int>(blockIdx.x), seq,
                   tile)) {
    return false;
  }
  if (decoded_elsewhere(p, seq)) return false;
  const int seq_row = tile * p.rows_per_tile;  // the tile's first row within its sequence
  w.blocks = p.block_ids + p.seq_block_start[seq];
  w.kv_head = static_cast<int>(blockIdx.z);
  w.part = static_cast<int>(blockIdx.y);
  w.first_row = p.seq_first_row[seq] + seq_row;
  w.n_rows = min(p.rows_per_tile, p.seq_first_row[seq + 1] - w.first_row);
  w.first_pos = p.seq_n_past[seq] + seq_row;
  // The tile's last row sees keys [0, first_pos + n_rows); earlier rows a prefix.
  w.key_begin = w.part * p.part_keys;
  w.key_end = min(w.key_begin + p.part_keys, w.first_pos + w.n_rows);
  return w.key_begin < w.key_end;
}

// Query v of a tile is row v / group, query head kv_head * group + v % group;
// its "unit" row * n_heads + head indexes q, out and the partial results.
__device__ __forceinline__ int64_t query_unit(const AttentionParams& p, const WorkItem& w, int v) {
  return (static_cast<int64_t>(w.first_row) + v / p.group) * p.n_heads + w.kv_head * p.group +
         v % p.group;
}

// K of `key` for the item's kv head (V is part_bytes further).
__device__ __forceinline__ const std::byte* key_address(const AttentionParams& p, const WorkItem& w,
                                                        int key) {
  const int64_t block = w.blocks[key / p.block_tokens];
  return p.kv + block * p.slot_bytes + w.kv_head * p.head_bytes +
         (key % p.block_tokens) * p.row_bytes;
}

// Element c of a query's result: normalised into out, or unnormalised into
// the item's part slot when the keys are split.
__device__ __forceinline__ void store_output(const AttentionParams& p, const WorkItem& w,
                                             int64_t unit, int c, float acc, float l) {
  if (p.part_acc == nullptr) {
    p.out[unit * p.head_dim + c] = acc / l;
  } else {
    p.part_acc[(unit * p.n_parts + w.part) * p.head_dim + c] = acc;
  }
}
__device__ __forceinline__ void store_stats(const AttentionParams& p, const WorkItem& w,
                                            int64_t unit, float m, float l) {
  if (p.part_ml == nullptr) return;
  float* ml = p.part_ml + (unit * p.n_parts + w.part) * 2;
  ml[0] = m;
  ml[1] = l;
}

// ---------------------------------------------------------------------------
// Tensor-core helpers (sm_80+: cp.async, ldmatrix, mma.sync m16n8k16)
//
// mma fragments, per lane: g = lane / 4, t = lane % 4.
//   A (16x16, row-major): a0 (g, 2t..2t+1), a1 (g+8, 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..)
//   B (16x8):             b0 (k 2t..2t+1, n g), b1 (k 2t+8.., n g)
//   C (16x8, f32):        c0 c1 (g, 2t..2t+1), c2 c3 (g+8, 2t..2t+1)
// The low half of each 32-bit register holds the lower column (or k).

__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async_16(void* smem, const void* global) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_address(smem)), "l"(global)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Waits until at most n of this thread's committed groups are in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Four 8x8 b16 matrices; lanes 8i..8i+7 address the rows of matrix i.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const __half* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(row))
               : "memory");
}
// The same, each matrix transposed on the way.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const __half* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(row))
               : "memory");
}

// d += a * b on one 16x8x16 tile.
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                          uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// (x, y) as hi + lo, two f16 pairs whose sum carries ~22 significant bits.
struct HalfPairs {
  uint32_t hi;
  uint32_t lo;
};
__device__ __forceinline__ uint32_t as_u32(__half2 h) {
  uint32_t u;
  memcpy(&u, &h, sizeof(u));
  return u;
}
__device__ __forceinline__ HalfPairs split_f16(float x, float y) {
  const __half2 hi = __floats2half2_rn(x, y);
  const float2 back = __half22float2(hi);
  return {as_u32(hi), as_u32(__floats2half2_rn(x - back.x, y - back.y))};
}

// ---------------------------------------------------------------------------
// attention_mma_kernel: f16 K/V, head_dim D = 64 or 128

constexpr int kMmaQueries = 16;                        // per warp: the mma's M
constexpr int kMmaTileQueries = kWarps * kMmaQueries;  // per block
constexpr int kMmaKeys = 64;                           // keys per shared-memory stage
constexpr int kMmaSubKeys = 16;                        // keys per warp step: P.V's mma K
constexpr int kMmaSubTiles = kMmaKeys / kMmaSubKeys;

template <int D>
struct MmaShape {
  // Halves per staged key row: the 16-byte pad puts the 8 rows of each
  // ldmatrix on 8 distinct 4-bank groups.
  static constexpr int kStride = D + 8;
  static constexpr int kKHalves = kMmaKeys * kStride;  // a stage's K; its V follows
  static constexpr int kStageHalves = 2 * kKHalves;
  static constexpr int kSmemBytes = 2 * kStageHalves * static_cast<int>(sizeof(__half));
  // Per-lane state a warp hands over when key slices merge: m[2], l[2], o.
  static constexpr int kMergeFloats = 4 + D / 2;
  static_assert((kWarps - 1) * kMergeFloats * 32 * 4 <= kSmemBytes);
};

// How a block's warps share its queries: n_queries <= 16 (decode) gives all
// 16 to every warp and splits each stage's keys 4 ways; <= 32 two groups of
// 16, keys split 2 ways; more: four groups, each warp sees every key.
struct WarpRole {
  int query_group = 0;  // this warp's queries: [16 * query_group, + 16)
  int key_slice = 0;    // this warp's sub-tiles of a stage: [key_slice * subs, + subs)
  int n_slices = 1;
  int subs = kMmaSubTiles;
  bool active = false;  // false: all 16 queries are padding; skip the maths
};

__device__ WarpRole warp_role(int n_queries) {
  WarpRole r;
  r.n_slices = n_queries <= kMmaQueries ? 4 : n_queries <= 2 * kMmaQueries ? 2 : 1;
  const int n_groups = kWarps / r.n_slices;
  const int warp = threadIdx.x / 32;
  r.query_group = warp % n_groups;
  r.key_slice = warp / n_groups;
  r.subs = kMmaSubTiles / r.n_slices;
  r.active = r.query_group * kMmaQueries < n_queries;
  return r;
}

// A lane's queries (rows g and g + 8 of its warp's 16) and running state.
template <int D>
struct MmaState {
  uint32_t q_hi[D / 16][4];  // A fragments of q * scale, per k-step of 16 dims
  uint32_t q_lo[D / 16][4];
  int pos[2];         // the two queries' positions; -1 for padding (every key masked)
  float m[2];         // running max of the scaled scores
  float l[2];         // running sum of exp(s - m) over this lane's columns only
  float o[D / 8][4];  // C fragments of the unnormalised output, per 8 dims
};

template <int D>
__device__ __forceinline__ void mma_load_queries(const AttentionParams& p, const WorkItem& w,
                                                 int n_queries, int query_group, MmaState<D>& st) {
  const int lane = threadIdx.x % 32;
  const float* rows[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int v = query_group * kMmaQueries + lane / 4 + 8 * r;
    const bool real = v < n_queries;
    rows[r] = real ? p.q + query_unit(p, w, v) * D : nullptr;
    st.pos[r] = real ? w.first_pos + v / p.group : -1;
    st.m[r] = -INFINITY;
    st.l[r] = 0.0f;
  }
#pragma unroll
  for (int ks = 0; ks < D / 16; ++ks) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {  // a_e: row g + 8 * (e & 1), dims + 8 * (e >> 1)
      const float* row = rows[e & 1];
      const int c = ks * 16 + (e >> 1) * 8 + 2 * (lane % 4);
      const float2 x =
          row != nullptr ? *reinterpret_cast<const float2*>(row + c) : make_float2(0.0f, 0.0f);
      const HalfPairs h = split_f16(x.x * p.scale, x.y * p.scale);
      st.q_hi[ks][e] = h.hi;
      st.q_lo[ks][e] = h.lo;
    }
  }
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) st.o[n][e] = 0.0f;
  }
}

// Issues the copies of keys [key0, key0 + 64) of K and V into a stage; keys
// at or past key_end become zeros (never NaN: p = 0 times V must stay 0).
template <int D>
__device__ __forceinline__ void mma_load_stage(const AttentionParams& p, const WorkItem& w,
                                               __half* stage, int key0) {
  using S = MmaShape<D>;
  constexpr int kChunks = D / 8;  // 16-byte chunks per key row
  constexpr int kRowsPerPass = kThreads / kChunks;
  const int chunk = threadIdx.x % kChunks;
#pragma unroll
  for (int pass = 0; pass < kMmaKeys / kRowsPerPass; ++pass) {
    const int r = pass * kRowsPerPass + threadIdx.x / kChunks;
    const int key = key0 + r;
    __half* k_dst = stage + r * S::kStride + chunk * 8;
    __half* v_dst = k_dst + S::kKHalves;
    if (key < w.key_end) {
      const std::byte* src = key_address(p, w, key) + chunk * 16;
      cp_async_16(k_dst, src);
      cp_async_16(v_dst, src + p.part_bytes);
    } else {
      *reinterpret_cast<uint4*>(k_dst) = make_uint4(0, 0, 0, 0);
      *reinterpret_cast<uint4*>(v_dst) = make_uint4(0, 0, 0, 0);
    }
  }
}

// s = (q * scale) . k for the lane's fragments of 16 queries x 16 keys.
template <int D>
__device__ __forceinline__ void mma_scores(const __half* k_sub, const MmaState<D>& st,
                                           float (&s)[2][4]) {
  using S = MmaShape<D>;
  const int lane = threadIdx.x % 32;
  // Matrices: 0 keys 0-7 dims 0-7, 1 keys 0-7 dims 8-15, 2 keys 8-15 dims 0-7,
  // 3 keys 8-15 dims 8-15: b0, b1 of key n-tile 0, then of n-tile 1.
  const __half* row = k_sub + ((lane & 7) + (lane >> 4) * 8) * S::kStride + ((lane >> 3) & 1) * 8;
#pragma unroll
  for (int n = 0; n < 2; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) s[n][e] = 0.0f;
  }
#pragma unroll
  for (int ks = 0; ks < D / 16; ++ks) {
    uint32_t b[4];
    ldmatrix_x4(b, row + ks * 16);
    mma_16816(s[0], st.q_hi[ks], b[0], b[1]);
    mma_16816(s[0], st.q_lo[ks], b[0], b[1]);
    mma_16816(s[1], st.q_hi[ks], b[2], b[3]);
    mma_16816(s[1], st.q_lo[ks], b[2], b[3]);
  }
}

// o += p . v for the lane's fragments of 16 queries x 16 keys; a: P's A fragments.
template <int D>
__device__ __forceinline__ void mma_values(const __half* v_sub, const uint32_t (&a_hi)[4],
                                           const uint32_t (&a_lo)[4], MmaState<D>& st) {
  using S = MmaShape<D>;
  const int lane = threadIdx.x % 32;
  // Transposed matrices: 0 keys 0-7 dims 0-7, 1 keys 8-15 dims 0-7, 2 keys
  // 0-7 dims 8-15, 3 keys 8-15 dims 8-15: b0, b1 of dim n-tile 0, then 1.
  const __half* row = v_sub + ((lane & 7) + ((lane >> 3) & 1) * 8) * S::kStride + (lane >> 4) * 8;
#pragma unroll
  for (int nd = 0; nd < D / 16; ++nd) {
    uint32_t b[4];
    ldmatrix_x4_trans(b, row + nd * 16);
    mma_16816(st.o[2 * nd], a_hi, b[0], b[1]);
    mma_16816(st.o[2 * nd], a_lo, b[0], b[1]);
    mma_16816(st.o[2 * nd + 1], a_hi, b[2], b[3]);
    mma_16816(st.o[2 * nd + 1], a_lo, b[2], b[3]);
  }
}

// One stage for one warp: scores of its sub-tiles, causal and range mask,
// online-softmax update, then P.V. key0: the stage's first key.
template <int D>
__device__ __forceinline__ void mma_attend_stage(const __half* k_stage, const __half* v_stage,
                                                 int key0, int key_end, const WarpRole& role,
                                                 MmaState<D>& st) {
  using S = MmaShape<D>;
  const int lane = threadIdx.x % 32;
  float s[kMmaSubTiles][2][4];
  float row_max[2] = {st.m[0], st.m[1]};
#pragma unroll
  for (int j = 0; j < kMmaSubTiles; ++j) {
    if (j >= role.subs) break;
    const int sub = role.key_slice * role.subs + j;
    mma_scores<D>(k_stage + sub * kMmaSubKeys * S::kStride, st, s[j]);
#pragma unroll
    for (int n = 0; n < 2; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {  // c_e: row g + 8 * (e >> 1), key 2t + (e & 1)
        const int key = key0 + sub * kMmaSubKeys + n * 8 + 2 * (lane % 4) + (e & 1);
        if (key >= key_end || key > st.pos[e >> 1]) s[j][n][e] = -INFINITY;
        row_max[e >> 1] = fmaxf(row_max[e >> 1], s[j][n][e]);
      }
    }
  }
  float shift[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {  // the 4 lanes of a quad share rows g and g + 8
    row_max[r] = fmaxf(row_max[r], __shfl_xor_sync(kFullMask, row_max[r], 1));
    row_max[r] = fmaxf(row_max[r], __shfl_xor_sync(kFullMask, row_max[r], 2));
    shift[r] = softmax_shift(row_max[r]);
    const float alpha = __expf(st.m[r] - shift[r]);  // 0 while m was -inf
    st.m[r] = row_max[r];
    st.l[r] *= alpha;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      st.o[n][2 * r] *= alpha;
      st.o[n][2 * r + 1] *= alpha;
    }
  }
#pragma unroll
  for (int j = 0; j < kMmaSubTiles; ++j) {
    if (j >= role.subs) break;
    float pr[2][4];
#pragma unroll
    for (int n = 0; n < 2; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        pr[n][e] = __expf(s[j][n][e] - shift[e >> 1]);
        st.l[e >> 1] += pr[n][e];
      }
    }
    // C fragments of keys 0-7 and 8-15 are exactly P's A fragment (k = key).
    const HalfPairs a0 = split_f16(pr[0][0], pr[0][1]);
    const HalfPairs a1 = split_f16(pr[0][2], pr[0][3]);
    const HalfPairs a2 = split_f16(pr[1][0], pr[1][1]);
    const HalfPairs a3 = split_f16(pr[1][2], pr[1][3]);
    const uint32_t a_hi[4] = {a0.hi, a1.hi, a2.hi, a3.hi};
    const uint32_t a_lo[4] = {a0.lo, a1.lo, a2.lo, a3.lo};
    const int sub = role.key_slice * role.subs + j;
    mma_values<D>(v_stage + sub * kMmaSubKeys * S::kStride, a_hi, a_lo, st);
  }
}

// Key slices > 0 hand (m, l, o) to slice 0 of their query group through
// shared memory (free once the stages are done). Call from all threads.
template <int D>
__device__ __forceinline__ void mma_merge_slices(float* scratch, const WarpRole& role,
                                                 MmaState<D>& st) {
  using S = MmaShape<D>;
  const int lane = threadIdx.x % 32;
  const int n_groups = kWarps / role.n_slices;
  auto region = [&](int slice) {  // [float][lane]: each lane touches its own bank
    return scratch + ((slice - 1) * n_groups + role.query_group) * S::kMergeFloats * 32 + lane;
  };
  if (role.key_slice > 0 && role.active) {
    float* r = region(role.key_slice);
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      r[i * 32] = st.m[i];
      r[(2 + i) * 32] = st.l[i];
    }
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) r[(4 + n * 4 + e) * 32] = st.o[n][e];
    }
  }
  __syncthreads();
  if (role.key_slice != 0 || !role.active) return;
  for (int slice = 1; slice < role.n_slices; ++slice) {
    const float* r = region(slice);
    float own[2];
    float other[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const float m_other = r[i * 32];
      const float m = fmaxf(st.m[i], m_other);
      own[i] = __expf(st.m[i] - softmax_shift(m));
      other[i] = __expf(m_other - softmax_shift(m));
      st.m[i] = m;
      st.l[i] = st.l[i] * own[i] + r[(2 + i) * 32] * other[i];
    }
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        st.o[n][e] = st.o[n][e] * own[e >> 1] + r[(4 + n * 4 + e) * 32] * other[e >> 1];
      }
    }
  }
}

template <int D>
__device__ __forceinline__ void mma_store(const AttentionParams& p, const WorkItem& w,
                                          int n_queries, const WarpRole& role, MmaState<D>& st) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int r = 0; r < 2; ++r) {  // l: sum over the quad's columns
    st.l[r] += __shfl_xor_sync(kFullMask, st.l[r], 1);
    st.l[r] += __shfl_xor_sync(kFullMask, st.l[r], 2);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int v = role.query_group * kMmaQueries + lane / 4 + 8 * r;
    if (v >= n_queries) continue;
    const int64_t unit = query_unit(p, w, v);
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      const int c = n * 8 + 2 * (lane % 4);
      store_output(p, w, unit, c, st.o[n][2 * r], st.l[r]);
      store_output(p, w, unit, c + 1, st.o[n][2 * r + 1], st.l[r]);
    }
    if (lane % 4 == 0) store_stats(p, w, unit, st.m[r], st.l[r]);
  }
}

template <int D>
__global__ void __launch_bounds__(kThreads) attention_mma_kernel(const AttentionParams p) {
  let_next_kernel_start();
  using S = MmaShape<D>;
  extern __shared__ __align__(16) unsigned char mma_smem[];  // 2 stages of [K|V][64][kStride]
  __half* stages = reinterpret_cast<__half*>(mma_smem);
  WorkItem w;
  const bool has_work = find_work(p, w);  // from the step's metadata alone
  wait_for_prior_kernels();  // q and the new K/V are earlier kernels'
  if (!has_work) return;
  const int n_queries = w.n_rows * p.group;
  const WarpRole role = warp_role(n_queries);
  // Double buffering: stage i + 1 is in flight while stage i is used. The
  // first stage's copies are issued before the queries' loads wait.
  const int n_stages = ceil_div(w.key_end - w.key_begin, kMmaKeys);
  mma_load_stage<D>(p, w, stages, w.key_begin);
  cp_async_commit();
  MmaState<D> st;
  mma_load_queries<D>(p, w, n_queries, role.query_group, st);
  for (int i = 0; i < n_stages; ++i) {
    if (i + 1 < n_stages) {
      mma_load_stage<D>(p, w, stages + ((i + 1) % 2) * S::kStageHalves,
                        w.key_begin + (i + 1) * kMmaKeys);
    }
    cp_async_commit();  // possibly empty: keeps "all but the newest group" = stage i
    cp_async_wait<1>();
    __syncthreads();  // every thread's copies (and zero stores) for stage i are visible
    const __half* k_stage = stages + (i % 2) * S::kStageHalves;
    if (role.active) {
      mma_attend_stage<D>(k_stage, k_stage + S::kKHalves, w.key_begin + i * kMmaKeys, w.key_end,
                          role, st);
    }
    __syncthreads();  // stage i's buffer is refilled by the next iteration
  }
  cp_async_wait<0>();
  if (role.n_slices > 1) mma_merge_slices<D>(reinterpret_cast<float*>(mma_smem), role, st);
  if (role.key_slice == 0 && role.active) mma_store<D>(p, w, n_queries, role, st);
}

// ---------------------------------------------------------------------------
// attention_fma_kernel: f16 or f32 K/V, any even head_dim <= 256

constexpr int kFmaQueries = 16;                  // per block
constexpr int kFmaKeys = 32;                     // per stage: one per lane when scoring
constexpr int kFmaOwned = kFmaQueries / kWarps;  // queries whose softmax state a warp keeps
constexpr int kFmaAccs = kFmaQueries * kMaxHeadDim / kThreads;  // outputs per thread, at most

// Shared floats: q [16][d] (times scale), k [32][d + 1] (odd stride: lanes
// read different keys' rows without bank conflicts), v [32][d], p [16][32],
// alpha [16], final (m, l) [16][2].
constexpr int64_t fma_smem_floats(int64_t d) {
  return kFmaQueries * d + kFmaKeys * (d + 1) + kFmaKeys * d + kFmaQueries * kFmaKeys +
         3 * kFmaQueries;
}

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }

template <typename Elem>
__device__ void fma_load_stage(const AttentionParams& p, const int64_t* key_offsets, float* ks,
                               float* vs) {
  const int d = p.head_dim;
  for (int i = threadIdx.x; i < kFmaKeys * d; i += kThreads) {
    const int j = i / d;
    const int c = i - j * d;
    const int64_t offset = key_offsets[j];
    float k = 0.0f;  // keys past the item's end: zeros, so that p = 0 times v stays 0
    float v = 0.0f;
    if (offset >= 0) {
      k = to_float(reinterpret_cast<const Elem*>(p.kv + offset)[c]);
      v = to_float(reinterpret_cast<const Elem*>(p.kv + offset + p.part_bytes)[c]);
    }
    ks[j * (d + 1) + c] = k;
    vs[j * d + c] = v;
  }
}

__device__ float fma_dot(const float* q, const float* k, int d) {
  float even = 0.0f;
  float odd = 0.0f;
  for (int c = 0; c < d; c += 2) {
    even += q[c] * k[c];
    odd += q[c + 1] * k[c + 1];
  }
  return even + odd;
}

template <typename Elem>
__global__ void __launch_bounds__(kThreads) attention_fma_kernel(const AttentionParams p) {
  let_next_kernel_start();
  extern __shared__ float fma_smem[];
  __shared__ int64_t key_offsets[kFmaKeys];  // K of each stage key from p.kv; -1 past key_end
  WorkItem w;
  const bool has_work = find_work(p, w);  // from the step's metadata alone
  wait_for_prior_kernels();  // q and the new K/V are earlier kernels'
  if (!has_work) return;
  const int d = p.head_dim;
  float* qs = fma_smem;
  float* ks = qs + kFmaQueries * d;
  float* vs = ks + kFmaKeys * (d + 1);
  float* ps = vs + kFmaKeys * d;
  float* alpha = ps + kFmaQueries * kFmaKeys;
  float* ml = alpha + kFmaQueries;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int n_queries = w.n_rows * p.group;
  for (int i = threadIdx.x; i < kFmaQueries * d; i += kThreads) {
    const int v = i / d;
    qs[i] = v < n_queries ? p.q[query_unit(p, w, v) * d + (i - v * d)] * p.scale : 0.0f;
  }
  // Warp w keeps the softmax state of queries w, w + 4, w + 8, w + 12.
  float m[kFmaOwned];
  float l[kFmaOwned];
  int pos[kFmaOwned];
#pragma unroll
  for (int i = 0; i < kFmaOwned; ++i) {
    const int v = warp + kWarps * i;
    m[i] = -INFINITY;
    l[i] = 0.0f;
    pos[i] = v < n_queries ? w.first_pos + v / p.group : -1;  // -1: padding, every key masked
  }
  // Thread t accumulates outputs t + 128 i of the [16][d] tile.
  float acc[kFmaAccs] = {};
  for (int key0 = w.key_begin; key0 < w.key_end; key0 += kFmaKeys) {
    __syncthreads();  // the previous stage's readers are done (first stage: qs is written)
    if (threadIdx.x < kFmaKeys) {
      const int key = key0 + threadIdx.x;
      key_offsets[threadIdx.x] = key < w.key_end ? key_address(p, w, key) - p.kv : -1;
    }
    __syncthreads();
    fma_load_stage<Elem>(p, key_offsets, ks, vs);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kFmaOwned; ++i) {  // lane = key
      const int v = warp + kWarps * i;
      const int key = key0 + lane;
      float s = -INFINITY;
      if (key < w.key_end && key <= pos[i]) s = fma_dot(qs + v * d, ks + lane * (d + 1), d);
      const float new_max = fmaxf(m[i], warp_max(s));
      const float shift = softmax_shift(new_max);
      const float e = __expf(s - shift);
      const float a = __expf(m[i] - shift);
      l[i] = l[i] * a + warp_sum(e);
      m[i] = new_max;
      ps[v * kFmaKeys + lane] = e;
      if (lane == 0) alpha[v] = a;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kFmaAccs; ++i) {
      const int idx = threadIdx.x + i * kThreads;
      if (idx < kFmaQueries * d) {
        const int v = idx / d;
        const int c = idx - v * d;
        const float* pv = ps + v * kFmaKeys;
        float sum = acc[i] * alpha[v];
#pragma unroll
        for (int j = 0; j < kFmaKeys; ++j) sum += pv[j] * vs[j * d + c];
        acc[i] = sum;
      }
    }
  }
  if (lane == 0) {
#pragma unroll
    for (int i = 0; i < kFmaOwned; ++i) {
      const int v = warp + kWarps * i;
      ml[2 * v] = m[i];
      ml[2 * v + 1] = l[i];
    }
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kFmaAccs; ++i) {
    const int idx = threadIdx.x + i * kThreads;
    const int v = idx / d;
    if (idx < kFmaQueries * d && v < n_queries) {
      const int c = idx - v * d;
      const int64_t unit = query_unit(p, w, v);
      store_output(p, w, unit, c, acc[i], ml[2 * v + 1]);
      if (c == 0) store_stats(p, w, unit, ml[2 * v], ml[2 * v + 1]);
    }
  }
}

// ---------------------------------------------------------------------------
// combine_parts_kernel: one warp per (row, query head) merges its parts.

__global__ void __launch_bounds__(kThreads)
    combine_parts_kernel(const AttentionParams p, const int32_t* row_seq, int64_t n_units) {
  let_next_kernel_start();
  wait_for_prior_kernels();  // the parts are the kernel before's
  const int64_t unit = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (unit >= n_units) return;  // whole warps leave together
  const int lane = threadIdx.x % 32;
  const int64_t row = unit / p.n_heads;
  const int s = row_seq[row];
  if (decoded_elsewhere(p, s)) return;
  const int pos = p.seq_n_past[s] + static_cast<int>(row - p.seq_first_row[s]);
  // Parts 0..n-1 each hold key i * part_keys <= pos, so each has m finite, l >= 1.
  const int n = min(ceil_div(pos + 1, p.part_keys), p.n_parts);
  const float* ml = p.part_ml + unit * p.n_parts * 2;
  const float* acc = p.part_acc + unit * p.n_parts * p.head_dim;
  float m = -INFINITY;
  for (int i = 0; i < n; ++i) m = fmaxf(m, ml[2 * i]);
  float l = 0.0f;
  for (int i = 0; i < n; ++i) l += ml[2 * i + 1] * __expf(ml[2 * i] - m);
  for (int c = lane; c < p.head_dim; c += 32) {
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) sum += acc[i * p.head_dim + c] * __expf(ml[2 * i] - m);
    p.out[unit * p.head_dim + c] = sum / l;
  }
}

// ---------------------------------------------------------------------------
// Launch helpers

int64_t element_bytes(WeightType dtype) { return dtype == WeightType::kF32 ? 4 : 2; }

void check_arena(const CudaKvArena& arena, int64_t layer) {
  STRATA_CHECK(arena.dtype == WeightType::kF16 || arena.dtype == WeightType::kF32,
               "KV dtype must be f16 or f32, not ", weight_type_name(arena.dtype));
  STRATA_CHECK(arena.base != nullptr && arena.block_tokens > 0 && arena.n_kv_heads > 0);
  STRATA_CHECK(arena.head_dim > 0 && arena.head_dim % 2 == 0 && arena.head_dim <= kMaxHeadDim,
               "head_dim ", arena.head_dim, " must be even and <= ", kMaxHeadDim);
  const int64_t elem = element_bytes(arena.dtype);
  STRATA_CHECK(arena.head_bytes == arena.block_tokens * arena.head_dim * elem &&
                   arena.part_bytes == arena.n_kv_heads * arena.head_bytes &&
                   arena.layer_bytes == 2 * arena.part_bytes,
               "arena sizes do not follow KvLayout");
  STRATA_CHECK(layer >= 0 && (layer + 1) * arena.layer_bytes <= arena.slot_bytes, "layer ", layer,
               " outside a slot of ", arena.slot_bytes, " bytes");
  // Pairs of elements are read and written whole.
  const auto base = reinterpret_cast<uintptr_t>(arena.base);
  STRATA_CHECK(base % (2 * elem) == 0 && arena.slot_bytes % (2 * elem) == 0 &&
                   arena.layer_bytes % (2 * elem) == 0,
               "KV arena not aligned to ", 2 * elem, " bytes");
}

void check_batch(const CudaAttentionBatch& batch) {
  STRATA_CHECK(batch.n_seqs >= 0 && batch.n_rows >= 0 && batch.n_rows <= INT32_MAX);
  if (batch.n_rows == 0) return;
  STRATA_CHECK(batch.n_seqs > 0 && batch.block_ids != nullptr && batch.seq_block_start != nullptr &&
               batch.seq_first_row != nullptr && batch.seq_n_past != nullptr &&
               batch.row_seq != nullptr);
  STRATA_CHECK(batch.max_seq_rows > 0 && batch.max_seq_rows <= batch.n_rows &&
                   batch.max_seq_keys >= batch.max_seq_rows && batch.max_seq_keys <= INT32_MAX,
               "max_seq_rows ", batch.max_seq_rows, ", max_seq_keys ", batch.max_seq_keys);
}

struct SplitPlan {
  int part_keys = 0;
  int n_parts = 1;
};

// Splits the keys when the batch's items cannot fill about two blocks per
// SM; each part keeps at least kMinPartKeys keys, and the partial results
// (bytes_per_part each) stay within kMaxWorkspaceBytes.
SplitPlan plan_split(int64_t n_items, int64_t max_seq_keys, int64_t bytes_per_part) {
  const int64_t wanted = 2 * int64_t{cuda_multiprocessor_count()};
  int64_t n_parts = 1;
  if (n_items < wanted) {
    n_parts = std::min({ceil_div64(wanted, n_items), max_seq_keys / kMinPartKeys,
                        int64_t{kMaxParts}, kMaxWorkspaceBytes / bytes_per_part});
    n_parts = std::max<int64_t>(n_parts, 1);
  }
  const int64_t part_keys =
      ceil_div64(ceil_div64(max_seq_keys, n_parts), kPartKeysAlign) * kPartKeysAlign;
  return {.part_keys = static_cast<int>(part_keys),
          .n_parts = static_cast<int>(ceil_div64(max_seq_keys, part_keys))};
}

// Kernels needing more than the default 48 KB of dynamic shared memory must
// say so (per device, so on every launch: the call is cheap).
template <typename Kernel>
void allow_shared_memory(Kernel kernel, int64_t bytes) {
  if (bytes <= 48 * 1024) return;
  STRATA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(bytes)));
}

template <typename Kernel>
void launch_attention(Kernel kernel, dim3 grid, int64_t smem_bytes, const AttentionParams& p,
                      cudaStream_t stream) {
  allow_shared_memory(kernel, smem_bytes);
  launch_dependent(kernel, grid, dim3(kThreads), static_cast<size_t>(smem_bytes), stream, p);
}

}  // namespace

KvSlots cuda_kv_slots(const CudaKvArena& arena, const CudaAttentionBatch& batch, int64_t layer) {
  check_arena(arena, layer);
  check_batch(batch);
  return {.kv = arena.base + layer * arena.layer_bytes,
          .slot_bytes = arena.slot_bytes,
          .head_bytes = arena.head_bytes,
          .part_bytes = arena.part_bytes,
          .row_bytes = arena.head_dim * element_bytes(arena.dtype),
          .block_tokens = static_cast<int>(arena.block_tokens),
          .f16 = arena.dtype == WeightType::kF16,
          .block_ids = batch.block_ids,
          .seq_block_start = batch.seq_block_start,
          .seq_first_row = batch.seq_first_row,
          .seq_n_past = batch.seq_n_past,
          .row_seq = batch.row_seq};
}

void cuda_write_kv(const CudaKvArena& arena, const CudaAttentionBatch& batch, int64_t layer,
                   const float* k, const float* v, cudaStream_t stream) {
  const KvSlots slots = cuda_kv_slots(arena, batch, layer);
  if (batch.n_rows == 0) return;
  STRATA_CHECK(reinterpret_cast<uintptr_t>(k) % 8 == 0 && reinterpret_cast<uintptr_t>(v) % 8 == 0);
  const int64_t kv_dim = arena.n_kv_heads * arena.head_dim;
  const KvWriteParams p{.slots = slots,
                        .k = k,
                        .v = v,
                        .kv_dim = kv_dim,
                        .head_dim = static_cast<int>(arena.head_dim),
                        .n_pairs = batch.n_rows * kv_dim / 2};
  const auto n_blocks = static_cast<unsigned int>(ceil_div64(p.n_pairs, kThreads));
  launch_dependent(write_kv_kernel, dim3(n_blocks), dim3(kThreads), 0, stream, p);
}

size_t cuda_attention_max_workspace_bytes(int64_t n_rows, int64_t n_heads, int64_t head_dim) {
  // As plan_split bounds it: at most kMaxParts parts, within kMaxWorkspaceBytes.
  const int64_t bytes_per_part = n_rows * n_heads * (head_dim + 2) * int64_t{sizeof(float)};
  return static_cast<size_t>(std::min(kMaxParts * bytes_per_part, kMaxWorkspaceBytes));
}

void cuda_attention(const CudaKvArena& arena, const CudaAttentionBatch& batch, int64_t layer,
                    int64_t n_heads, float scale, const float* q, float* out,
                    DeviceBuffer& workspace, CudaDecodeScratch& decode_scratch,
                    cudaStream_t stream) {
  check_arena(arena, layer);
  check_batch(batch);
  STRATA_CHECK(n_heads > 0 && n_heads % arena.n_kv_heads == 0, "n_heads ", n_heads,
               " not a multiple of n_kv_heads ", arena.n_kv_heads);
  const int64_t group = n_heads / arena.n_kv_heads;
  STRATA_CHECK(group <= kFmaQueries, "GQA group ", group, " > ", kFmaQueries);
  STRATA_CHECK(arena.n_kv_heads <= 65535, "n_kv_heads ", arena.n_kv_heads, " > grid.z limit");
  if (batch.n_rows == 0) return;
  STRATA_CHECK(reinterpret_cast<uintptr_t>(q) % 8 == 0);
  const int64_t d = arena.head_dim;

  // The decode kernel first, when some sequence may be its (with one
  // sequence the batch's bounds are that sequence's own); nothing else when
  // every sequence is.
  const bool decode_kernel = cuda_decode_attention_fits(arena, n_heads);
  const bool decode_only = cuda_attention_is_decode_only(arena, batch, n_heads);
  if (decode_kernel && (batch.n_seqs > 1 || decode_only)) {
    cuda_decode_attention(arena, batch, layer, n_heads, scale, q, out, decode_scratch, stream);
    if (decode_only) return;
  }

  // Tensor cores need 16-byte aligned key rows for cp.async.
  const bool aligned16 = reinterpret_cast<uintptr_t>(arena.base) % 16 == 0 &&
                         arena.slot_bytes % 16 == 0 && arena.layer_bytes % 16 == 0;
  const bool tensor_cores = arena.dtype == WeightType::kF16 && (d == 64 || d == 128) && aligned16;
  const int64_t rows_per_tile = (tensor_cores ? kMmaTileQueries : kFmaQueries) / group;
  // Sum over sequences of ceil(rows / rows_per_tile), bounded from above.
  const int64_t n_tiles =
      std::min(batch.n_seqs * ceil_div64(batch.max_seq_rows, rows_per_tile),
               (batch.n_rows + batch.n_seqs * (rows_per_tile - 1)) / rows_per_tile);
  STRATA_CHECK(n_tiles <= INT32_MAX);
  const int64_t bytes_per_part = batch.n_rows * n_heads * (d + 2) * int64_t{sizeof(float)};
  const SplitPlan split =
      plan_split(n_tiles * arena.n_kv_heads, batch.max_seq_keys, bytes_per_part);

  AttentionParams p{.kv = arena.base + layer * arena.layer_bytes,
                    .slot_bytes = arena.slot_bytes,
                    .head_bytes = arena.head_bytes,
                    .part_bytes = arena.part_bytes,
                    .row_bytes = d * element_bytes(arena.dtype),
                    .block_tokens = static_cast<int>(arena.block_tokens),
                    .block_ids = batch.block_ids,
                    .seq_block_start = batch.seq_block_start,
                    .seq_first_row = batch.seq_first_row,
                    .seq_n_past = batch.seq_n_past,
                    .n_seqs = static_cast<int>(batch.n_seqs),
                    .n_heads = static_cast<int>(n_heads),
                    .group = static_cast<int>(group),
                    .head_dim = static_cast<int>(d),
                    .rows_per_tile = static_cast<int>(rows_per_tile),
                    .scale = scale,
                    .q = q,
                    .out = out,
                    .part_keys = split.part_keys,
                    .n_parts = split.n_parts,
                    .short_decodes_elsewhere = decode_kernel};
  if (split.n_parts > 1) {
    const int64_t acc_floats = batch.n_rows * n_heads * split.n_parts * d;
    const int64_t ml_floats = batch.n_rows * n_heads * split.n_parts * 2;
    workspace.reserve(static_cast<size_t>(acc_floats + ml_floats) * sizeof(float));
    p.part_acc = workspace.as<float>();
    p.part_ml = p.part_acc + acc_floats;
  }

  const dim3 grid(static_cast<unsigned int>(n_tiles), static_cast<unsigned int>(split.n_parts),
                  static_cast<unsigned int>(arena.n_kv_heads));
  if (tensor_cores && d == 64) {
    launch_attention(attention_mma_kernel<64>, grid, MmaShape<64>::kSmemBytes, p, stream);
  } else if (tensor_cores) {
    launch_attention(attention_mma_kernel<128>, grid, MmaShape<128>::kSmemBytes, p, stream);
  } else {
    const int64_t smem_bytes = fma_smem_floats(d) * int64_t{sizeof(float)};
    if (arena.dtype == WeightType::kF16) {
      launch_attention(attention_fma_kernel<__half>, grid, smem_bytes, p, stream);
    } else {
      launch_attention(attention_fma_kernel<float>, grid, smem_bytes, p, stream);
    }
  }
  if (split.n_parts > 1) {
    const int64_t n_units = batch.n_rows * n_heads;
    launch_dependent(combine_parts_kernel,
                     dim3(static_cast<unsigned int>(ceil_div64(n_units, kWarps))), dim3(kThreads),
                     0, stream, p, batch.row_seq, n_units);
  }
}

}  // namespace strata
