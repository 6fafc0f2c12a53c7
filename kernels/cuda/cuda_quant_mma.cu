// cuda_mma_matmul (cuda_quant_mma.h): weights dequantized in registers and
// multiplied on tensor cores (mma.sync m16n8k16, f16 in, f32 accumulation).
//
// A warp owns 16 rows (lanes g = lane / 4 hold rows g and g + 8, as the mma's
// A fragment wants) and walks the row in slabs of 4 units: lane t = lane % 4
// takes unit 4s + t of both its rows, one 16-byte load each, and decodes it
// into f16 pairs (cuda_weights_layout.cuh's units: each run of the unit is
// kRunLen consecutive row elements). One mma k-step eats two pairs per lane:
// the 16 k of the step are 4 elements of each of the 4 units side by side,
// not 16 consecutive row elements. A dot product does not care in which order
// its terms come, as long as x comes in the same order: x is staged in shared
// memory as f16 pairs in exactly the order the lanes decode the weights (unit
// by unit, pair by pair), so a lane's B fragment for a step is the one 8-byte
// read beside its A pairs. The mma's N is the tokens, 8 per tile, padded with
// zeros.
//
// Shared memory: per token, each unit's pairs then kUnitPad halves, and the
// token's row padded to 8 words mod 32: the 32 lanes' 8-byte B reads (4 units
// x 8 tokens) then fall in distinct banks for every unit size (checked by
// enumeration for units of 16 and 32 elements, and 8).
//
// A block is 8 warps: kRowGroups groups of 16 rows, each row group's units
// split among kSplits warps, whose partial sums meet in shared memory at the
// end in a fixed order. Up to 8 tokens: blocks of 16 rows split 8 ways; more:
// blocks of 128 rows, whose row is split among blocks instead when there
// would be too few of them (partial sums in scratch, added in split order by
// a second kernel). The weight loads of a tile are issued before its x is
// staged, and the first loads go out before the kernel that writes x has
// finished (a dependent launch). Nothing depends on how many of the padded
// tokens are real, so up to 8 tokens give each token the same bits alone or batched.
#include "kernels/cuda/cuda_quant_mma.h"

#include <cooperative_groups.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <type_traits>

#include "common/check.h"
#include "gpu/cuda_check.h"
#include "gpu/cuda_device.h"
#include "kernels/cuda/cuda_dependent_launch.cuh"
#include "kernels/cuda/cuda_swiglu.cuh"
#include "kernels/cuda/cuda_weights_layout.cuh"

namespace strata {
namespace {

using cuda_layout::kUnitElems;
using cuda_layout::MatrixView;
using cuda_layout::RowView;
using cuda_layout::Unit;

constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;
constexpr int kUnitPad = 4;     // halves after each unit's pairs in shared memory
constexpr int kSlabUnits = 4;   // units side by side in one k-step (lanes t = 0..3)
constexpr int kRowsPerWarp = 16;

// Words per token in the staged tile: the units' words, then padded to 8 mod 32.
constexpr int token_words(int tile_units, int unit_words) {
  const int words = tile_units * unit_words;
  return words + ((8 - words % 32) + 32) % 32;
}

template <WeightType kType, int kTokenTiles>
struct MmaConfig {
  // Up to 8 tokens: blocks of 16 rows, each row's units split among the 8
  // warps (plenty of blocks, a short walk each). More tokens: blocks of 128
  // rows, a warp each, so that a staged x tile serves 128 rows (x's bytes
  // from L2 stay below the weights' from DRAM); the row's units are then
  // split among blocks instead (plan_for).
  static constexpr int kRowGroups = kTokenTiles == 1 ? 1 : kWarps;
  static constexpr int kSplits = kWarps / kRowGroups;
  // Slabs whose loads are in flight at once (each reloaded as it is used),
  // within 128 registers (two blocks an SM).
  static constexpr bool kSmallUnit = sizeof(typename Unit<kType>::Raw) <= 32;
  static constexpr int kUnroll = kTokenTiles == 1 && kSmallUnit ? 4 : 2;
  // Above 8 tokens the staged tile is zero where the mma reads past the real
  // x (padding tokens, units up to the last slab's end), so B fragments load
  // without a test; units of more than 32 bytes (Q5_K, Q6_K) keep the test:
  // their loads in flight leave no registers for untested ones.
  static constexpr bool kZerosStaged = kTokenTiles > 1 && kSmallUnit;
  // The staged x tile's budget, sized for 8 padded tokens (fewer real tokens
  // use less), and at most what sm_86/89/120 give a block (99 KB). A tile
  // then holds 4,000-5,400 elements of a row (by unit size): a row of 4,096
  // block-quantized weights is staged once, every warp's slabs of it loaded
  // in one go (64 KB cut it in two: two rounds, half the loads in flight).
  static constexpr int kSmemBytes = 96 << 10;
  static_assert(kWarps % kRowGroups == 0);
  // The most units of a row a tile holds (with the padding), in whole slabs.
  static constexpr int kUnitWords = (cuda_layout::kUnitElems<kType> + kUnitPad) / 2;
  static constexpr int kBudgetUnits =
      (kSmemBytes / (4 * 8 * kTokenTiles) - 32) / kUnitWords / kSlabUnits * kSlabUnits;
  // With zeros staged the staged tokens lie the widest tile's words apart,
  // whatever the tile: a B fragment's offset from its tile 0 is then an
  // immediate, not one more multiply-add a load (the larger units' kernels
  // spill with it).
  static constexpr int kFixedTokenWords =
      kZerosStaged ? token_words(kBudgetUnits, kUnitWords) : 0;
};

struct MmaParams {
  MatrixView w;
  const float* x;  // [n_tokens][row_length]
  float* y;        // [n_tokens][n_rows]
  float* partials;  // [gridDim.y][n_tokens][n_rows] when the row is split among blocks
  int n_tokens;
  int units_per_split;  // units of a row per block in y
  int tile_units;     // units of a row per staged x tile: a multiple of kSlabUnits
  int token_words;    // 32-bit words between tokens in the staged tile
  bool x_pairs_aligned;  // x is 8-byte aligned: pairs load as float2
  // Fused SwiGLU (up to 8 tokens) when > 0: w is [gate | up], swiglu_n rows
  // each; block b takes gate rows 8b + g and up rows swiglu_n + 8b + g, and y
  // is [n_tokens][swiglu_n] of silu(gate) * up.
  int64_t swiglu_n;
  int64_t row_blocks;  // row blocks of the product (mma_resident_decode_kernel walks them)
  // > 0 (decode products of few rows, sm_90): blocks (x, 0) and (x, 1) are a
  // cluster, each taking half the row's units; both store their warps'
  // sums in block 0's shared memory from this word on, where block 0 adds
  // all 16 in order (finish_pair).
  int pair_offset;
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// ---------------------------------------------------------------------------
// Units as f16 pairs

// Two bytes of `word` (picked by the prmt selector: 0x4140 bytes 0 and 1,
// 0x4342 bytes 2 and 3) as the f16 pair 1024 + byte: the byte becomes the
// mantissa under 0x64, the exponent of 1024. Exact for bytes below 1024.
__device__ __forceinline__ __half2 small_ints_pair(uint32_t word, uint32_t selector) {
  const uint32_t bits = __byte_perm(word, 0x64646464u, selector);
  return *reinterpret_cast<const __half2*>(&bits);
}

// (pair - bias) * d as f16 bits: the subtraction is exact (integers below
// 2048), the product rounded once.
__device__ __forceinline__ uint32_t scaled_pair(__half2 pair, __half2 d, float bias) {
  const __half2 h = __hmul2(__hsub2(pair, __float2half2_rn(bias)), d);
  return *reinterpret_cast<const uint32_t*>(&h);
}

// (pair - 1024) * scale + neg_min as f16 bits, one rounding after the exact
// subtraction.
__device__ __forceinline__ uint32_t fma_pair(__half2 pair, __half2 scale, __half2 neg_min) {
  const __half2 h = __hfma2(__hsub2(pair, __float2half2_rn(1024.0f)), scale, neg_min);
  return *reinterpret_cast<const uint32_t*>(&h);
}

template <WeightType kType>
struct PairUnit {
  using U = Unit<kType>;
  static constexpr int kElems = kUnitElems<kType>;
  static constexpr int kPairsPerRun = U::kRunLen / 2;
  static constexpr int kPairs = kElems / 2;
  static constexpr int kUnitWords = (kElems + kUnitPad) / 2;  // staged words per unit

  // Row element of the first value of pair p of unit u.
  static __device__ int pair_offset(int u, int p) {
    return U::run_offset(u, p / kPairsPerRun) + 2 * (p % kPairsPerRun);
  }

  // The pairs of run `run`: the values the CPU dequantizer computes, rounded
  // to nearest f16 (as the cuBLAS path's dequantized tiles), except Q4_K,
  // which scales in f16 (below).
  static __device__ void decode_run(const typename U::Raw& raw, int u, int run,
                                    uint32_t (&pairs)[kPairsPerRun]) {
    if constexpr (kType == WeightType::kF16) {
      pairs[0] = raw.words[0];  // f16 pairs already
      pairs[1] = raw.words[1];
      pairs[2] = raw.words[2];
      pairs[3] = raw.words[3];
    } else if constexpr (kType == WeightType::kQ8_0) {
      // Exact integers in f16, then one rounding of d * q: what the generic
      // path gives, in a third of the instructions.
      const __half2 d = __half2half2(__ushort_as_half(static_cast<unsigned short>(raw.d)));
      const uint32_t words[4] = {raw.qs.x, raw.qs.y, raw.qs.z, raw.qs.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const uint32_t biased = words[i] ^ 0x80808080u;  // q + 128 as unsigned bytes
        pairs[2 * i] = scaled_pair(small_ints_pair(biased, 0x4140), d, 1152.0f);
        pairs[2 * i + 1] = scaled_pair(small_ints_pair(biased, 0x4342), d, 1152.0f);
      }
    } else if constexpr (kType == WeightType::kQ4_K) {
      // q * scale - min as one f16 fma, scale and min rounded to f16 first:
      // an error of the order of f16 rounding (the tests' tolerance holds
      // it), in half the instructions of rounding the f32 value.
      typename U::Run v;
      U::scale_min(raw.meta, u, run, v);
      const __half2 scale = __float2half2_rn(v.scale), neg_min = __float2half2_rn(-v.min);
      const uint32_t words[4] = {raw.qs.x, raw.qs.y, raw.qs.z, raw.qs.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const uint32_t q = (words[i] >> (4 * run)) & 0x0f0f0f0fu;
        pairs[2 * i] = fma_pair(small_ints_pair(q, 0x4140), scale, neg_min);
        pairs[2 * i + 1] = fma_pair(small_ints_pair(q, 0x4342), scale, neg_min);
      }
    } else {
      typename U::Run v;
      U::decode(raw, u, run, v);
#pragma unroll
      for (int i = 0; i < kPairsPerRun; ++i) {
        const __half2 h = __floats2half2_rn(cuda_layout::exact_value<kType>(v, 2 * i),
                                            cuda_layout::exact_value<kType>(v, 2 * i + 1));
        pairs[i] = *reinterpret_cast<const uint32_t*>(&h);
      }
    }
  }
};

// ---------------------------------------------------------------------------
// Device code

__device__ __forceinline__ void mma_16816(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                          uint32_t a3, uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t pack_half2(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
}

// All threads: x's columns of units [u0, u0 + n_units) for every real token
// into the tile, as f16 pairs in decoding order. x's alignment is a template
// parameter, not a branch in the loop: a branch around each load put every
// load in its own basic block, so a thread's pairs (8 of a 4,096-wide row)
// waited on L2 one after another; unrolled without it, the loads of several
// pairs go out together.
//
// Up to 8 tokens padding tokens are never staged (their B fragments are
// zeros). Above, a tile holds few pairs a token (768 columns for 64 tokens:
// 1.5 a thread), so a thread loads one pair of several tokens at once
// (8, or 2 for units of more than 32 bytes, whose weight loads in flight
// leave fewer registers; token by token, a tile of 64 tokens was 64 round
// trips to L2 in a row while every warp of the block waited), and the tile
// is zero where the mma reads past the real x (MmaConfig::kZerosStaged).
template <bool kPairsAligned>
__device__ __forceinline__ uint32_t load_x_pair(const float* src) {
  const float2 v = kPairsAligned ? __ldg(reinterpret_cast<const float2*>(src))
                                 : make_float2(__ldg(src), __ldg(src + 1));
  return pack_half2(v.x, v.y);
}

template <WeightType kType, bool kPairsAligned>
__device__ void stage_x_few_tokens(const MmaParams& p, int u0, int n_units, uint32_t* tile) {
  using P = PairUnit<kType>;
  const int pairs_per_token = n_units * P::kPairs;
  for (int token = 0; token < p.n_tokens; ++token) {
    const float* x = p.x + static_cast<int64_t>(token) * p.w.row_length;
    uint32_t* out = tile + token * p.token_words;
#pragma unroll 4
    for (int i = static_cast<int>(threadIdx.x); i < pairs_per_token; i += kThreads) {
      const int u = i / P::kPairs, pair = i % P::kPairs;  // kPairs: a power of two
      out[u * P::kUnitWords + pair] = load_x_pair<kPairsAligned>(x + P::pair_offset(u0 + u, pair));
    }
  }
}

template <WeightType kType, int kTokenTiles, bool kPairsAligned>
__device__ void stage_x_many_tokens(const MmaParams& p, int u0, int n_units, int token_words,
                                    uint32_t* tile) {
  using C = MmaConfig<kType, kTokenTiles>;
  using P = PairUnit<kType>;
  constexpr int kGroup = C::kSmallUnit ? 8 : 2;  // tokens whose pairs load at once
  const int64_t stride = p.w.row_length;
  for (int i = static_cast<int>(threadIdx.x); i < n_units * P::kPairs; i += kThreads) {
    const int u = i / P::kPairs, pair = i % P::kPairs;
    const float* x = p.x + P::pair_offset(u0 + u, pair);
    uint32_t* out = tile + u * P::kUnitWords + pair;
    int token = 0;
    for (; token + kGroup <= p.n_tokens; token += kGroup) {
      uint32_t v[kGroup];
#pragma unroll
      for (int k = 0; k < kGroup; ++k) v[k] = load_x_pair<kPairsAligned>(x + k * stride);
#pragma unroll
      for (int k = 0; k < kGroup; ++k) out[k * token_words] = v[k];
      x += kGroup * stride;
      out += kGroup * token_words;
    }
    for (; token < p.n_tokens; ++token, x += stride, out += token_words) {
      *out = load_x_pair<kPairsAligned>(x);
    }
  }
  if constexpr (!C::kZerosStaged) return;  // their B fragments are tested
  // Zeros: the real tokens' units from n_units to the last slab's end, and
  // the padding tokens' units up to there.
  const int staged_words = n_units * P::kUnitWords;
  const int end_words = (n_units + kSlabUnits - 1) / kSlabUnits * kSlabUnits * P::kUnitWords;
  if (const int tail = end_words - staged_words; tail > 0) {
    for (int i = static_cast<int>(threadIdx.x); i < p.n_tokens * tail; i += kThreads) {
      tile[i / tail * token_words + staged_words + i % tail] = 0;
    }
  }
  uint32_t* padding = tile + p.n_tokens * token_words;
  for (int i = static_cast<int>(threadIdx.x); i < (8 * kTokenTiles - p.n_tokens) * end_words;
       i += kThreads) {
    padding[i / end_words * token_words + i % end_words] = 0;
  }
}

// acc += the unit's two rows (raw) times x for every token tile. `x_unit` is
// the staged unit's first word for token g of tile 0; invalid units (past
// the row's end) and padding tokens (real_token[t]: whether token 8t + g is
// real) add zeros: B fragments of zeros, or zeros staged (kZerosStaged).
template <WeightType kType, int kTokenTiles>
__device__ void mma_unit(const typename Unit<kType>::Raw (&raw)[2], int u, bool valid,
                         const bool (&real_token)[kTokenTiles], const uint32_t* x_unit,
                         int token_words, float (&acc)[kTokenTiles][4]) {
  using P = PairUnit<kType>;
#pragma unroll
  for (int run = 0; run < Unit<kType>::kRuns; ++run) {
    uint32_t a[2][P::kPairsPerRun];
    P::decode_run(raw[0], u, run, a[0]);
    P::decode_run(raw[1], u, run, a[1]);
#pragma unroll
    for (int j = 0; j < P::kPairsPerRun / 2; ++j) {
      const int pair = run * P::kPairsPerRun + 2 * j;
#pragma unroll
      for (int tile = 0; tile < kTokenTiles; ++tile) {
        uint2 b = make_uint2(0, 0);
        if (MmaConfig<kType, kTokenTiles>::kZerosStaged || (valid && real_token[tile])) {
          b = *reinterpret_cast<const uint2*>(x_unit + 8 * tile * token_words + pair);
        }
        mma_16816(acc[tile], a[0][2 * j], a[1][2 * j], a[0][2 * j + 1], a[1][2 * j + 1], b.x,
                  b.y);
      }
    }
  }
}

// Issues the loads of the tile's unit u of both rows; units past the tile's
// n_units read as zeros.
template <WeightType kType>
__device__ __forceinline__ void load_slab(const RowView (&rows)[2], int u0, int u, int n_units,
                                          typename Unit<kType>::Raw (&raw)[2]) {
  if (u < n_units) {
    raw[0] = Unit<kType>::load(rows[0], u0 + u);
    raw[1] = Unit<kType>::load(rows[1], u0 + u);
  } else {
    raw[0] = typename Unit<kType>::Raw{};
    raw[1] = typename Unit<kType>::Raw{};
  }
}

// Issues the loads of the unrolled slabs s0 + r * kSplits (r < kUnroll).
template <WeightType kType, int kUnroll, int kSplits>
__device__ void load_slabs(const RowView (&rows)[2], int u0, int s0, int n_units, int t,
                           typename Unit<kType>::Raw (&raw)[kUnroll][2]) {
#pragma unroll
  for (int r = 0; r < kUnroll; ++r) {
    load_slab<kType>(rows, u0, kSlabUnits * (s0 + r * kSplits) + t, n_units, raw[r]);
  }
}

// Stores a warp's sums of its 16 rows (local_row = the lane's first) as
// split `split` of the block's partial sums, [split][row][token]: rows are
// as wide as the real tokens (odd counts: one more).
template <int kTokenTiles, int kBlockRows>
__device__ void store_warp_sums(const float (&acc)[kTokenTiles][4], float* partial, int split,
                                int local_row, int t, int n_tokens) {
  constexpr int kTokensPad = 8 * kTokenTiles;
#pragma unroll
  for (int tile = 0; tile < kTokenTiles; ++tile) {
    const int token = 8 * tile + 2 * t;
    if (token >= n_tokens) break;
    float* at = partial + (split * kBlockRows + local_row) * kTokensPad + token;
    at[0] = acc[tile][0];
    at[1] = acc[tile][1];
    at[8 * kTokensPad] = acc[tile][2];  // row + 8
    at[8 * kTokensPad + 1] = acc[tile][3];
  }
}

// Row block `row_block`'s outputs into out ([n_tokens][n_rows]): each row's
// partial sums added in split order.
template <int kSplits, int kBlockRows, int kTokensPad>
__device__ void write_row_block(const MmaParams& p, const float* partial, int64_t row_block,
                                float* out) {
  for (int i = static_cast<int>(threadIdx.x); i < kBlockRows * p.n_tokens; i += kThreads) {
    const int r = i % kBlockRows, token = i / kBlockRows;
    const int64_t row = row_block * kBlockRows + r;
    if (row >= p.w.n_rows) continue;
    float sum = 0.0f;
#pragma unroll
    for (int s = 0; s < kSplits; ++s) sum += partial[(s * kBlockRows + r) * kTokensPad + token];
    out[static_cast<int64_t>(token) * p.w.n_rows + row] = sum;
  }
}

// The fused SwiGLU's outputs of row block `row_block` (see
// MmaParams::swiglu_n): its partial sums' rows r < 8 are gates, r + 8 the
// ups of the same outputs, added in split order as the plain outputs are.
template <int kSplits, int kBlockRows, int kTokensPad>
__device__ void swiglu_epilogue(const MmaParams& p, const float* partial, int64_t row_block) {
  for (int i = static_cast<int>(threadIdx.x); i < 8 * p.n_tokens; i += kThreads) {
    const int r = i % 8, token = i / 8;
    const int64_t out = row_block * 8 + r;
    if (out >= p.swiglu_n) continue;
    float gate = 0.0f, up = 0.0f;
#pragma unroll
    for (int s = 0; s < kSplits; ++s) {
      gate += partial[(s * kBlockRows + r) * kTokensPad + token];
      up += partial[(s * kBlockRows + r + 8) * kTokensPad + token];
    }
    p.y[token * p.swiglu_n + out] = silu_times(gate, up);
  }
}

// The rows whose units lane g of a decode warp (one row group of 16) loads
// in row block rb: g and g + 8 of its 16, or with the fused SwiGLU gate row
// 8 rb + g and its up row (clamped: rows past the end load a real row,
// whose outputs are never written).
__device__ __forceinline__ void decode_lane_rows(const MmaParams& p, int64_t rb, int g,
                                                 RowView (&rows)[2]) {
  int64_t r0 = rb * kRowsPerWarp + g, r1 = r0 + 8;
  if (p.swiglu_n > 0) {
    r0 = min(rb * 8 + g, p.swiglu_n - 1);
    r1 = p.swiglu_n + r0;
  }
  rows[0] = p.w.row(min(r0, p.w.n_rows - 1));
  rows[1] = p.w.row(min(r1, p.w.n_rows - 1));
}

// A cluster pair's end (MmaParams::pair_offset): the warps' sums of block
// rank r go to splits 8r .. 8r + 7 of block 0's buffer, and once both are
// there block 0 writes the row block, or the fused SwiGLU's outputs (whose
// plan is the plain product's: the same bits), the 16 splits added in
// order. The buffer lies past block 0's x tile, which block 0 may still be
// reading when block 1's sums arrive.
template <int kSplits>
__device__ void finish_pair(const MmaParams& p, const float (&acc)[1][4], int split, int g, int t,
                            uint32_t* smem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  float* buffer = reinterpret_cast<float*>(smem + p.pair_offset);
  float* at = cluster.map_shared_rank(buffer, 0) + rank * (kSplits * kRowsPerWarp * 8);
  store_warp_sums<1, kRowsPerWarp>(acc, at, split, g, t, p.n_tokens);
  cluster.sync();
  if (rank != 0) return;
  if (p.swiglu_n > 0) {
    swiglu_epilogue<2 * kSplits, kRowsPerWarp, 8>(p, buffer, blockIdx.x);
  } else {
    write_row_block<2 * kSplits, kRowsPerWarp, 8>(p, buffer, blockIdx.x, p.y);
  }
#endif
}

// Block (x, y): rows [x * kBlockRows, + kBlockRows) over units
// [y * units_per_split, + units_per_split) of the row; with one split in y
// it writes y, else its partial sums (summed by sum_splits_kernel).
template <WeightType kType, int kTokenTiles>
__global__ void __launch_bounds__(kThreads, 2) mma_matmul_kernel(MmaParams p) {
  using C = MmaConfig<kType, kTokenTiles>;
  using P = PairUnit<kType>;
  using Raw = typename Unit<kType>::Raw;
  constexpr int kTokensPad = 8 * kTokenTiles;
  constexpr int kBlockRows = kRowsPerWarp * C::kRowGroups;
  extern __shared__ uint32_t smem[];

  let_next_kernel_start();  // it waits for this kernel's writes before it reads them
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int g = lane / 4, t = lane % 4;
  const int row_group = warp / C::kSplits, split = warp % C::kSplits;
  RowView rows[2];
  if constexpr (kTokenTiles == 1) {
    decode_lane_rows(p, blockIdx.x, g, rows);
  } else {
    const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kBlockRows + row_group * kRowsPerWarp;
    rows[0] = p.w.row(min(row0 + g, p.w.n_rows - 1));
    rows[1] = p.w.row(min(row0 + g + 8, p.w.n_rows - 1));
  }
  const int token_words = C::kZerosStaged ? C::kFixedTokenWords : p.token_words;
  const int units_per_row = p.w.row_length / P::kElems;
  const int k_begin = static_cast<int>(blockIdx.y) * p.units_per_split;
  const int k_end = min(k_begin + p.units_per_split, units_per_row);

  bool real_token[kTokenTiles];
#pragma unroll
  for (int tile = 0; tile < kTokenTiles; ++tile) real_token[tile] = 8 * tile + g < p.n_tokens;
  float acc[kTokenTiles][4] = {};
  // Split w's slabs are w, w + kSplits, ...: all the splits stay busy on
  // short rows, and at each unrolled step they read neighbouring slabs.
  // Each slot is reloaded as soon as its own slab is used: with the slab
  // kUnroll rounds ahead, so the next round's loads fly while this one
  // computes, or past the tile's last round with its slab of the next tile's
  // first round, so those fly across the restaging of x. (A slot unused in
  // a tile is unused in the next: tiles never grow.)
  Raw raw[C::kUnroll][2];
  const int first_units = min(p.tile_units, k_end - k_begin);
  load_slabs<kType, C::kUnroll, C::kSplits>(rows, k_begin, split, first_units, t, raw);
  for (int u0 = k_begin; u0 < k_end; u0 += p.tile_units) {
    const int n_units = min(p.tile_units, k_end - u0);
    const int n_slabs = (n_units + kSlabUnits - 1) / kSlabUnits;
    const int next_u0 = u0 + p.tile_units;
    const int next_n_units = min(p.tile_units, k_end - next_u0);  // <= 0: no next tile
    wait_for_prior_kernels();  // x is theirs (the weights above are not)
    __syncthreads();  // the previous tile is no longer read
    if constexpr (kTokenTiles == 1) {
      if (p.x_pairs_aligned) {
        stage_x_few_tokens<kType, true>(p, u0, n_units, smem);
      } else {
        stage_x_few_tokens<kType, false>(p, u0, n_units, smem);
      }
    } else if (p.x_pairs_aligned) {
      stage_x_many_tokens<kType, kTokenTiles, true>(p, u0, n_units, token_words, smem);
    } else {
      stage_x_many_tokens<kType, kTokenTiles, false>(p, u0, n_units, token_words, smem);
    }
    __syncthreads();
    for (int s0 = split; s0 < n_slabs; s0 += C::kSplits * C::kUnroll) {  // the same for the warp
#pragma unroll
      for (int r = 0; r < C::kUnroll; ++r) {
        const int s = s0 + r * C::kSplits;
        if (s >= n_slabs) break;
        const int u = kSlabUnits * s + t;
        mma_unit<kType, kTokenTiles>(raw[r], u0 + u, u < n_units, real_token,
                                     smem + g * token_words + u * P::kUnitWords, token_words, acc);
        const int next = s + C::kSplits * C::kUnroll;
        if (next < n_slabs) {
          load_slab<kType>(rows, u0, kSlabUnits * next + t, n_units, raw[r]);
        } else if (next_n_units > 0) {
          load_slab<kType>(rows, next_u0, kSlabUnits * (split + r * C::kSplits) + t,
                           next_n_units, raw[r]);
        }
      }
    }
  }

  // The warp splits' partial sums, [split][row][token], added in split order.
  wait_for_prior_kernels();  // a no-op here, unless the block had no tile: it writes only now
  if constexpr (kTokenTiles == 1) {
    if (p.pair_offset > 0) return finish_pair<C::kSplits>(p, acc, split, g, t, smem);
  }
  __syncthreads();
  float* partial = reinterpret_cast<float*>(smem);
  store_warp_sums<kTokenTiles, kBlockRows>(acc, partial, split, row_group * kRowsPerWarp + g, t,
                                           p.n_tokens);
  __syncthreads();
  if (kTokenTiles == 1 && p.swiglu_n > 0) {
    swiglu_epilogue<C::kSplits, kBlockRows, kTokensPad>(p, partial, blockIdx.x);
    return;
  }
  float* out = gridDim.y == 1 ? p.y : p.partials + blockIdx.y * int64_t{p.n_tokens} * p.w.n_rows;
  write_row_block<C::kSplits, kBlockRows, kTokensPad>(p, partial, blockIdx.x, out);
}

// Decode products (up to 8 tokens) whose whole row is one staged x tile and
// a whole number of unrolled rounds for every warp (plan_for): blocks stay
// resident and walk row blocks blockIdx.x, + gridDim.x, ... For a block of
// mma_matmul_kernel, x is staged before its arithmetic, and its loads and
// its arithmetic take turns; here x is staged once, each warp's slabs of
// successive row blocks are one stream of loads (each register slot
// reloaded with the slab kUnroll ahead as soon as it is used: the next row
// block's first slabs fly while this one finishes), and the warps' sums of
// a row block meet in one of two shared buffers while the next one
// computes. Each row's sum runs in the same order as in mma_matmul_kernel
// (warp w takes slabs w, w + 8, ...; the warps' sums added in warp order):
// the same bits.
template <WeightType kType>
__global__ void __launch_bounds__(kThreads, 2) mma_resident_decode_kernel(MmaParams p) {
  using C = MmaConfig<kType, 1>;
  using P = PairUnit<kType>;
  using Raw = typename Unit<kType>::Raw;
  static_assert(C::kRowGroups == 1 && C::kSplits == kWarps);
  constexpr int kUnroll = C::kUnroll;
  constexpr int kPartialFloats = kWarps * kRowsPerWarp * 8;  // one row block's warp sums
  extern __shared__ uint32_t smem[];

  let_next_kernel_start();  // it waits for this kernel's writes before it reads them
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int g = lane / 4, t = lane % 4;
  const int n_units = p.w.row_length / P::kElems;
  const int warp_slabs = n_units / (kSlabUnits * kWarps);  // a multiple of kUnroll
  const int n_row_blocks =
      static_cast<int>((p.row_blocks - blockIdx.x + gridDim.x - 1) / gridDim.x);
  const int n_items = n_row_blocks * warp_slabs;
  // Item i of the warp's stream: slab warp + kWarps * (i % warp_slabs) of
  // its block's row block i / warp_slabs.
  const auto load_item = [&](int i, Raw(&raw)[2]) {
    RowView rows[2];
    decode_lane_rows(p, blockIdx.x + static_cast<int64_t>(i / warp_slabs) * gridDim.x, g, rows);
    load_slab<kType>(rows, 0, kSlabUnits * (warp + kWarps * (i % warp_slabs)) + t, n_units, raw);
  };

  Raw raw[kUnroll][2];
#pragma unroll
  for (int r = 0; r < kUnroll; ++r) load_item(r, raw[r]);  // n_items >= kUnroll: in flight
  wait_for_prior_kernels();  // x is theirs (the weights above are not)
  if (p.x_pairs_aligned) {
    stage_x_few_tokens<kType, true>(p, 0, n_units, smem);
  } else {
    stage_x_few_tokens<kType, false>(p, 0, n_units, smem);
  }
  float* partials = reinterpret_cast<float*>(smem + p.n_tokens * p.token_words);  // 2 buffers
  __syncthreads();

  const bool real_token[1] = {g < p.n_tokens};
  const uint32_t* x_lane = smem + g * p.token_words;
  for (int j = 0; j < n_row_blocks; ++j) {
    float acc[1][4] = {};
    for (int k0 = 0; k0 < warp_slabs; k0 += kUnroll) {
#pragma unroll
      for (int r = 0; r < kUnroll; ++r) {
        const int u = kSlabUnits * (warp + kWarps * (k0 + r)) + t;
        mma_unit<kType, 1>(raw[r], u, true, real_token, x_lane + u * P::kUnitWords, p.token_words,
                           acc);
        const int next = j * warp_slabs + k0 + r + kUnroll;
        if (next < n_items) load_item(next, raw[r]);
      }
    }
    // Buffer j % 2: the sync after row block j + 1's sums are stored comes
    // after every thread has written row block j, so j + 2 may reuse it.
    float* partial = partials + (j % 2) * kPartialFloats;
    store_warp_sums<1, kRowsPerWarp>(acc, partial, warp, g, t, p.n_tokens);
    __syncthreads();
    const int64_t row_block = blockIdx.x + static_cast<int64_t>(j) * gridDim.x;
    if (p.swiglu_n > 0) {
      swiglu_epilogue<kWarps, kRowsPerWarp, 8>(p, partial, row_block);
    } else {
      write_row_block<kWarps, kRowsPerWarp, 8>(p, partial, row_block, p.y);
    }
  }
}

// y[i] = the sum of the n_splits partial outputs' element i, in split order.
__global__ void sum_splits_kernel(const float* partials, int n_splits, int64_t n, float* y) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float sum = 0.0f;
  for (int s = 0; s < n_splits; ++s) sum += partials[s * n + i];
  y[i] = sum;
}

// ---------------------------------------------------------------------------
// Host code

template <WeightType kType>
using TypeTag = std::integral_constant<WeightType, kType>;

// Whether decode products may pair blocks in clusters (sm_90 and later).
bool pairs_blocks() { return cuda_dependent_launch_supported(); }

template <typename Fn>
bool with_mma_type(WeightType type, Fn&& fn) {
  switch (type) {
    case WeightType::kF16:
      return fn(TypeTag<WeightType::kF16>{}), true;
    case WeightType::kQ8_0:
      return fn(TypeTag<WeightType::kQ8_0>{}), true;
    case WeightType::kQ4_0:
      return fn(TypeTag<WeightType::kQ4_0>{}), true;
    case WeightType::kQ4_K:
      return fn(TypeTag<WeightType::kQ4_K>{}), true;
    case WeightType::kQ5_K:
      return fn(TypeTag<WeightType::kQ5_K>{}), true;
    case WeightType::kQ6_K:
      return fn(TypeTag<WeightType::kQ6_K>{}), true;
    default:
      return false;
  }
}

// How a product is cut up: blocks of rows (x) and of the row's units (y),
// each block's units staged tile by tile.
struct MmaPlan {
  int64_t row_blocks = 0;
  int k_splits = 1;
  int units_per_split = 0;
  int tile_units = 0;
  int token_words = 0;
  int64_t smem_bytes = 0;
  // Decode products that mma_resident_decode_kernel may take: its shared
  // memory (the x tile, then two buffers of warp sums), 0 if it may not.
  int64_t resident_smem_bytes = 0;
  // Decode products of at most one row block an SM, on sm_90: row blocks
  // of two blocks in a cluster (MmaParams::pair_offset), so that twice the
  // warps load the matrix; smem_bytes then ends with their sums' buffer.
  bool pair = false;
  int64_t pair_offset_bytes = 0;
};

// Depends on the shape and on which kTokenTiles config, never on how many of
// its tokens are real, so that every token's sums run in the same order.
template <WeightType kType, int kTokenTiles>
MmaPlan plan_for(const CudaWeightMatrix& w, int64_t n_tokens, bool may_pair = false) {
  using C = MmaConfig<kType, kTokenTiles>;
  using P = PairUnit<kType>;
  constexpr int kTokensPad = 8 * kTokenTiles;
  MmaPlan plan;
  const int units_per_row = static_cast<int>(w.row_length() / P::kElems);
  plan.row_blocks = ceil_div(w.n_rows(), int64_t{kRowsPerWarp} * C::kRowGroups);
  STRATA_CHECK(plan.row_blocks <= INT_MAX, w.n_rows(), " rows");
  // Blocks of 128 rows (more tokens) are few on small matrices: split their
  // rows among blocks too, to about two blocks per multiprocessor, each
  // split at least four slabs long.
  if (C::kRowGroups > 1) {
    const int64_t wanted = ceil_div(2 * cuda_multiprocessor_count(), plan.row_blocks);
    const int64_t most = std::max<int64_t>(1, units_per_row / (4 * kSlabUnits));
    plan.k_splits = static_cast<int>(std::clamp<int64_t>(wanted, 1, most));
  }
  // Few row blocks of a decode product (up to one an SM) leave half the
  // SMs' warp slots empty: pair them, if every warp of both still has a slab.
  if (kTokenTiles == 1 && may_pair && plan.row_blocks <= cuda_multiprocessor_count() &&
      units_per_row >= 2 * kSlabUnits * kWarps) {
    plan.k_splits = 2;
    plan.pair = true;
  }
  plan.units_per_split = static_cast<int>(
      ceil_div(ceil_div(units_per_row, plan.k_splits), kSlabUnits) * kSlabUnits);
  plan.k_splits = static_cast<int>(ceil_div(units_per_row, plan.units_per_split));
  // As few tiles as the budget allows (with the padding), of equal length
  // in whole slabs, so that no tile leaves most warps idle.
  static_assert(C::kUnitWords == P::kUnitWords);
  const int64_t n_tiles = ceil_div(plan.units_per_split, C::kBudgetUnits);
  plan.tile_units =
      static_cast<int>(ceil_div(ceil_div(plan.units_per_split, n_tiles), kSlabUnits) * kSlabUnits);
  plan.token_words =
      C::kZerosStaged ? C::kFixedTokenWords : token_words(plan.tile_units, P::kUnitWords);
  // Shared memory for x (the real tokens', above 8 tokens the padding
  // tokens' zeros too), or the warps' partial sums.
  const int64_t staged_tokens = kTokenTiles == 1 ? n_tokens : kTokensPad;
  const int64_t tile_bytes = int64_t{4} * staged_tokens * plan.token_words;
  const int64_t partial_bytes = int64_t{4} * C::kSplits * kRowsPerWarp * C::kRowGroups * kTokensPad;
  plan.smem_bytes = std::max(tile_bytes, partial_bytes);
  STRATA_CHECK(plan.smem_bytes <= C::kSmemBytes, "x tile of ", plan.smem_bytes, " bytes");
  if (plan.pair) {
    plan.pair_offset_bytes = (plan.smem_bytes + 15) / 16 * 16;
    plan.smem_bytes = plan.pair_offset_bytes + 2 * partial_bytes;
  }
  // Resident decode blocks: the whole row in one tile, every warp the same
  // whole number of unrolled rounds, and room for the two buffers at 8 tokens.
  const int64_t resident_bytes = int64_t{4} * 8 * plan.token_words + 2 * partial_bytes;
  if (kTokenTiles == 1 && plan.k_splits == 1 && plan.tile_units == units_per_row &&
      units_per_row % (kSlabUnits * kWarps * C::kUnroll) == 0 &&
      resident_bytes <= C::kSmemBytes) {
    plan.resident_smem_bytes = tile_bytes + 2 * partial_bytes;
  }
  return plan;
}

// Blocks of mma_resident_decode_kernel for this plan: as many as fit the
// GPU at once, evened out so that each walks the same number of row blocks
// (to one); 0 when the row blocks fit in one wave (nothing to walk).
template <WeightType kType>
int64_t resident_grid(const MmaPlan& plan) {
  if (plan.resident_smem_bytes == 0) return 0;
  auto* kernel = mma_resident_decode_kernel<kType>;
  STRATA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(plan.resident_smem_bytes)));
  int per_sm = 0;
  STRATA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, kernel, kThreads, static_cast<size_t>(plan.resident_smem_bytes)));
  const int64_t wave = int64_t{per_sm} * cuda_multiprocessor_count();
  if (wave == 0 || plan.row_blocks <= wave) return 0;
  return ceil_div(plan.row_blocks, ceil_div(plan.row_blocks, wave));
}

template <typename Fn>
void with_token_tiles(int64_t n_tokens, Fn&& fn) {
  if (n_tokens <= 8) return fn(std::integral_constant<int, 1>{});
  if (n_tokens <= 16) return fn(std::integral_constant<int, 2>{});
  if (n_tokens <= 32) return fn(std::integral_constant<int, 4>{});
  return fn(std::integral_constant<int, 8>{});
}

template <WeightType kType, int kTokenTiles>
void launch(MmaParams p, const MmaPlan& plan, cudaStream_t stream) {
  p.units_per_split = plan.units_per_split;
  p.tile_units = plan.tile_units;
  p.token_words = plan.token_words;
  p.row_blocks = plan.row_blocks;
  p.pair_offset = static_cast<int>(plan.pair_offset_bytes / 4);
  if constexpr (kTokenTiles == 1) {
    if (const int64_t grid = resident_grid<kType>(plan); grid > 0) {
      launch_dependent(mma_resident_decode_kernel<kType>, dim3(static_cast<unsigned>(grid)),
                       dim3(kThreads), static_cast<size_t>(plan.resident_smem_bytes), stream, p);
      return;
    }
  }
  auto* kernel = mma_matmul_kernel<kType, kTokenTiles>;
  if (plan.smem_bytes > (48 << 10)) {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(plan.smem_bytes)));
  }
  if (plan.pair) {
    launch_dependent_cluster(kernel, dim3(static_cast<unsigned>(plan.row_blocks), 2),
                             dim3(kThreads), dim3(1, 2, 1), static_cast<size_t>(plan.smem_bytes),
                             stream, p);
    return;
  }
  // A dependent launch: its first weight loads go out while the kernel
  // before it finishes.
  launch_dependent(kernel,
                   dim3(static_cast<unsigned>(plan.row_blocks), static_cast<unsigned>(plan.k_splits)),
                   dim3(kThreads), static_cast<size_t>(plan.smem_bytes), stream, p);
  if (plan.k_splits == 1) return;
  const int64_t n = int64_t{p.n_tokens} * p.w.n_rows;
  sum_splits_kernel<<<static_cast<unsigned>(ceil_div(n, kThreads)), kThreads, 0, stream>>>(
      p.partials, plan.k_splits, n, p.y);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool cuda_mma_supports(const CudaWeightMatrix& w, int64_t n_tokens) {
  if (n_tokens < 1 || n_tokens > kMaxMmaTokens || w.row_length() > INT_MAX) return false;
  // F16 units are 16 bytes of the row: rows must be whole units.
  if (w.type() == WeightType::kF16 && w.quant_row_bytes() % 16 != 0) return false;
  return with_mma_type(w.type(), [](auto) {});
}

int64_t cuda_mma_scratch_floats(const CudaWeightMatrix& w, int64_t n_tokens) {
  STRATA_CHECK(cuda_mma_supports(w, n_tokens), "no tensor-core kernel for ",
               weight_type_name(w.type()), " with ", n_tokens, " tokens");
  int64_t floats = 0;
  with_mma_type(w.type(), [&](auto type) {
    with_token_tiles(n_tokens, [&](auto tiles) {
      const MmaPlan plan =
          plan_for<decltype(type)::value, decltype(tiles)::value>(w, n_tokens, pairs_blocks());
      floats = plan.k_splits == 1 || plan.pair ? 0 : plan.k_splits * n_tokens * w.n_rows();
    });
  });
  return floats;
}

bool cuda_mma_pairs_blocks(const CudaWeightMatrix& w, int64_t n_tokens) {
  if (n_tokens > 8 || !cuda_mma_supports(w, n_tokens)) return false;
  bool pair = false;
  with_mma_type(w.type(), [&](auto type) {
    pair = plan_for<decltype(type)::value, 1>(w, n_tokens, pairs_blocks()).pair;
  });
  return pair;
}

bool cuda_mma_walks_resident(const CudaWeightMatrix& w, int64_t n_tokens) {
  if (n_tokens > 8 || !cuda_mma_supports(w, n_tokens)) return false;
  bool resident = false;
  with_mma_type(w.type(), [&](auto type) {
    constexpr WeightType kType = decltype(type)::value;
    resident = resident_grid<kType>(plan_for<kType, 1>(w, n_tokens)) > 0;
  });
  return resident;
}

namespace {

// cuda_mma_matmul, or with swiglu_n > 0 cuda_mma_swiglu (see MmaParams).
void run_mma(const CudaWeightMatrix& w, const float* x, int64_t n_tokens, float* y,
             float* scratch, int64_t swiglu_n, cudaStream_t stream) {
  const MmaParams p{.w = cuda_layout::matrix_view(w),
                    .x = x,
                    .y = y,
                    .partials = scratch,
                    .n_tokens = static_cast<int>(n_tokens),
                    .units_per_split = 0,
                    .tile_units = 0,
                    .token_words = 0,
                    .x_pairs_aligned = reinterpret_cast<uintptr_t>(x) % 8 == 0,
                    .swiglu_n = swiglu_n,
                    .row_blocks = 0,
                    .pair_offset = 0};
  with_mma_type(w.type(), [&](auto type) {
    with_token_tiles(n_tokens, [&](auto tiles) {
      constexpr WeightType kType = decltype(type)::value;
      constexpr int kTokenTiles = decltype(tiles)::value;
      const MmaPlan plan =
          plan_for<kType, kTokenTiles>(w, n_tokens, pairs_blocks());
      STRATA_CHECK(plan.k_splits == 1 || plan.pair || scratch != nullptr,
                   "no scratch for split sums");
      launch<kType, kTokenTiles>(p, plan, stream);
    });
  });
}

}  // namespace

void cuda_mma_matmul(const CudaWeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                     float* scratch, cudaStream_t stream) {
  STRATA_CHECK(cuda_mma_supports(w, n_tokens), "no tensor-core kernel for ",
               weight_type_name(w.type()), " with ", n_tokens, " tokens");
  run_mma(w, x, n_tokens, y, scratch, 0, stream);
}

bool cuda_mma_swiglu_supports(const CudaWeightMatrix& w_gate_up, int64_t n_tokens) {
  return n_tokens <= kMaxMmaSwigluTokens && w_gate_up.n_rows() % 2 == 0 &&
         cuda_mma_supports(w_gate_up, n_tokens);
}

void cuda_mma_swiglu(const CudaWeightMatrix& w_gate_up, const float* x, int64_t n_tokens,
                     float* out, cudaStream_t stream) {
  STRATA_CHECK(cuda_mma_swiglu_supports(w_gate_up, n_tokens), "no fused SwiGLU for ",
               weight_type_name(w_gate_up.type()), " with ", w_gate_up.n_rows(), " rows and ",
               n_tokens, " tokens");
  run_mma(w_gate_up, x, n_tokens, out, nullptr, w_gate_up.n_rows() / 2, stream);
}

}  // namespace strata
