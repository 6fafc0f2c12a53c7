// CudaMatmul (cuda_matmul.h): a matrix-vector kernel for decode steps, cuBLAS
// on tensor cores for prefill, and the row gather (embedding lookup).
//
// The matrix-vector kernel, for n_tokens <= kMaxVectorTokens. Batch-1 decode
// is bound by reading the weights, so each weight byte is loaded once per
// step, 16 bytes a lane, several loads in flight, and dequantized in
// registers (cuda_weights_layout.cuh). A block of 8 warps:
//  - stages a tile of x (all the tokens' columns k0 .. k0 + tile) in shared
//    memory. Each lane dots whole runs of up to 16 elements, so lanes read x
//    at 64-byte strides: from global memory that touches 16 cache lines per
//    load (4x the L1 wavefronts of a contiguous load), and for 4-bit weights
//    x would then need more L1 bandwidth than the weights need DRAM
//    bandwidth. In shared memory, swizzled (swizzle() below), every 16-byte
//    read is conflict-free;
//  - each warp owns kRows rows (two for block types, so each x read serves two
//    rows); lane l takes units l, l + 32, ... of the tile for all its rows and
//    all the tokens: a weight is read once and used kTokens times;
//  - Q4_K / Q5_K: sum((q * s - m) x) = s * sum(q x) - m * sum(x), with the
//    sums of x over each 16-element run computed once while staging;
//  - then a warp-shuffle sum per (row, token), and lane (row, token) stores it.
//
// Prefill (n_tokens > kMaxVectorTokens): y^T = W x^T as cuBLAS sees it (column
// major): W row-major [n_rows][row_length] is the column-major
// row_length x n_rows matrix A with lda = row_length, so op(A) = A^T
// (n_rows x row_length); x row-major [n_tokens][row_length] is the column-major
// row_length x n_tokens matrix B (ldb = row_length, op N); y row-major
// [n_tokens][n_rows] is the column-major n_rows x n_tokens matrix C
// (ldc = n_rows). F16 / BF16 weights go in as they are with x rounded to
// f16 / bf16; F32 runs as SGEMM; block types are dequantized to f16, a tile of
// rows at a time, first. Always f32 accumulation and f32 output.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <type_traits>

#include "common/check.h"
#include "gpu/cuda_check.h"
#include "kernels/cuda/cuda_kquant_decode.h"
#include "kernels/cuda/cuda_matmul.h"
#include "kernels/cuda/cuda_quant_mma.h"
#include "kernels/cuda/cuda_warp_reduce.cuh"
#include "kernels/cuda/cuda_weights_layout.cuh"

namespace strata {
namespace {

using cuda_layout::is_plain;
using cuda_layout::kUnitElems;
using cuda_layout::MatrixView;
using cuda_layout::RowView;
using cuda_layout::Unit;

constexpr int kMatvecWarps = 8;
constexpr int kMatvecThreads = 32 * kMatvecWarps;
// Shared memory for the x tile (and run sums) per block: the default limit,
// which needs no opt-in, and lets 4 blocks share an SM.
constexpr int kMatvecSmemBytes = 48 << 10;
// Elements of x staged per pass: a multiple of this unless the whole row fits.
constexpr int kTileAlign = 256;
// Elements per precomputed sum of x (the runs of Q4_K / Q5_K).
constexpr int kRunSumElems = 16;

// Dequantized f16 weights per cuBLAS call on block types: the scratch bound.
constexpr int64_t kHalfWeightTileBytes = int64_t{32} << 20;
constexpr int kElementwiseThreads = 256;

template <WeightType kType, int kTokens>
struct MatvecConfig {
  // Rows per warp: block types share each x read between two rows, halving
  // the shared-memory traffic per weight byte.
  static constexpr int kRows = is_plain(kType) ? 1 : 2;
  // Units per lane and row loaded before any is used: 16-byte loads in flight.
  static constexpr int kUnroll = is_plain(kType)                                           ? 8
                                 : sizeof(typename Unit<kType>::Raw) <= 32 && kTokens <= 2 ? 4
                                                                                           : 2;
  // Few tokens: bound by memory; two blocks of 8 warps per SM (<= 128
  // registers; plain types four, <= 64) keep enough loads in flight. More
  // tokens: bound by arithmetic and shared-memory reads, and the registers go
  // to the accumulators.
  static constexpr int kMinBlocksPerSm = kTokens > 4 ? 1 : is_plain(kType) && kTokens <= 2 ? 4 : 2;
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// ---------------------------------------------------------------------------
// CUDA kernels

// Where float4 i of a token's tile lives: i with its low 3 bits XORed with a
// Gray code of the bits above. The 8 lanes of a quarter-warp (one 128-bit
// shared-memory wavefront) read 8 consecutive units; for every type the
// float4s they read then fall in 8 different bank groups (checked for each
// unit geometry, by element offset: F32 4u; F16 8u + 4f; Q8_0 16u + 4f; Q4_0
// 32u + 16 run + 4f; Q4_K / Q5_K 64c + 16(k % 2) + 32 run + 4f; Q6_K 128h +
// 32kk + 16(q % 2) + 64 run + 4f), and so do the staging writes. It only
// permutes within groups of 8 float4s, so a tile of n floats needs
// round_up(n, 32).
__device__ __forceinline__ int swizzle(int i) {
  const int group = i >> 3;
  return i ^ ((group ^ (group >> 1)) & 7);
}

// x staged in shared memory for one tile.
struct XTile {
  float* x;     // [kTokens][stride]: the tile's columns, float4s swizzled
  float* sums;  // [kTokens][n_sums]: sums of x over 16-element runs (Q4_K / Q5_K)
  int stride;   // floats per token: the tile length rounded up to 32
  int n_sums;   // tile length / 16
};

struct MatvecParams {
  MatrixView w;
  const float* x;  // [n_tokens][row_length]
  float* y;        // [n_tokens][n_rows]
  int tile_elems;  // columns of x per pass: a multiple of kTileAlign, or the whole row
  bool x_aligned;  // x is 16-byte aligned (row_length is a multiple of 4 here)
};

// All threads: copies columns [k0, k0 + len) of x's kTokens rows into the
// tile; with kSums also their 16-element sums (4 consecutive threads hold a
// run's 4 float4s; len is then a multiple of 16).
template <int kTokens, bool kSums>
__device__ void stage_x(const MatvecParams& p, int k0, int len, const XTile& tile) {
  const int n4 = len / 4;
  const int total = kTokens * n4;
  for (int first = 0; first < total; first += kMatvecThreads) {  // uniform trip count
    const int i = first + static_cast<int>(threadIdx.x);
    const bool valid = i < total;
    const int t = valid ? i / n4 : 0;
    const int c = valid ? i % n4 : 0;
    const float* src = p.x + static_cast<int64_t>(t) * p.w.row_length + k0 + 4 * c;
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (valid) {
      v = p.x_aligned ? __ldg(reinterpret_cast<const float4*>(src))
                      : make_float4(__ldg(src), __ldg(src + 1), __ldg(src + 2), __ldg(src + 3));
      reinterpret_cast<float4*>(tile.x + t * tile.stride)[swizzle(c)] = v;
    }
    if constexpr (kSums) {
      float s = (v.x + v.y) + (v.z + v.w);
      s += __shfl_xor_sync(0xffffffffu, s, 1);
      s += __shfl_xor_sync(0xffffffffu, s, 2);
      if (valid && c % 4 == 0) tile.sums[t * tile.n_sums + c / 4] = s;
    }
  }
}

// Issues the loads of units u + 32 j (j < kUnroll, those below u_end) of every row.
template <WeightType kType, int kRows, int kUnroll>
__device__ void load_units(const RowView (&rows)[kRows], int u, int u_end,
                           typename Unit<kType>::Raw (&raw)[kUnroll][kRows]) {
#pragma unroll
  for (int j = 0; j < kUnroll; ++j) {
    if (u + 32 * j < u_end) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) raw[j][r] = Unit<kType>::load(rows[r], u + 32 * j);
    }
  }
}

// acc[r][t] += unit u of row r . x of token t; k0 is the tile's first column.
// One run at a time, so that only a run of each row is held decoded.
template <WeightType kType, int kTokens, int kRows>
__device__ void dot_unit(const typename Unit<kType>::Raw (&raw)[kRows], int u, int k0,
                         const XTile& tile, float (&acc)[kRows][kTokens]) {
  using U = Unit<kType>;
#pragma unroll
  for (int run = 0; run < U::kRuns; ++run) {
    typename U::Run v[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) U::decode(raw[r], u, run, v[r]);
    const int offset = U::run_offset(u, run) - k0;  // in the tile; a multiple of kRunLen
    // The run's float4s offset / 4 + f share a group of 8 and have f in the
    // bits below offset / 4's: they sit at swizzle(offset / 4) ^ f.
    static_assert(U::kRunLen == 4 || U::kRunLen == 8 || U::kRunLen == 16);
    const int first = swizzle(offset / 4);
#pragma unroll
    for (int t = 0; t < kTokens; ++t) {
      const auto* xt = reinterpret_cast<const float4*>(tile.x + t * tile.stride);
      float s[kRows] = {};
#pragma unroll
      for (int f = 0; f < U::kRunLen / 4; ++f) {
        const float4 xv = xt[first ^ f];
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          const float* q = &v[r].q[4 * f];
          s[r] = fmaf(q[0], xv.x, s[r]);
          s[r] = fmaf(q[1], xv.y, s[r]);
          s[r] = fmaf(q[2], xv.z, s[r]);
          s[r] = fmaf(q[3], xv.w, s[r]);
        }
      }
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if constexpr (U::kHasScale) {
          acc[r][t] = fmaf(v[r].scale, s[r], acc[r][t]);
        } else {
          acc[r][t] += s[r];
        }
        if constexpr (U::kHasMin) {
          acc[r][t] =
              fmaf(-v[r].min, tile.sums[t * tile.n_sums + offset / kRunSumElems], acc[r][t]);
        }
      }
    }
  }
}

// y[t][row0 + r] = the warp's sum of acc[r][t], for rows below n_rows.
template <int kTokens, int kRows>
__device__ void store_rows(float (&acc)[kRows][kTokens], int64_t row0, const MatvecParams& p) {
  const int lane = static_cast<int>(threadIdx.x % 32);
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
#pragma unroll
    for (int t = 0; t < kTokens; ++t) {
      const float total = warp_sum(acc[r][t]);
      if (lane == r * kTokens + t && row0 + r < p.w.n_rows) p.y[t * p.w.n_rows + row0 + r] = total;
    }
  }
}

template <WeightType kType, int kTokens>
__global__ void __launch_bounds__(kMatvecThreads, (MatvecConfig<kType, kTokens>::kMinBlocksPerSm))
    matvec_kernel(MatvecParams p) {
  using U = Unit<kType>;
  constexpr int kRows = MatvecConfig<kType, kTokens>::kRows;
  constexpr int kUnroll = MatvecConfig<kType, kTokens>::kUnroll;
  constexpr int kElems = kUnitElems<kType>;
  extern __shared__ float4 smem[];

  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t row0 = (static_cast<int64_t>(blockIdx.x) * kMatvecWarps + threadIdx.x / 32) * kRows;
  const bool active = row0 < p.w.n_rows;  // the same for the whole warp
  RowView rows[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) rows[r] = p.w.row(min(row0 + r, p.w.n_rows - 1));

  const int stride = (p.tile_elems + 31) / 32 * 32;
  const XTile tile{reinterpret_cast<float*>(smem),
                   reinterpret_cast<float*>(smem) + kTokens * stride, stride,
                   p.tile_elems / kRunSumElems};
  float acc[kRows][kTokens] = {};
  for (int k0 = 0; k0 < p.w.row_length; k0 += p.tile_elems) {
    const int len = min(p.tile_elems, p.w.row_length - k0);
    const int u_end = (k0 + len) / kElems;
    int u = k0 / kElems + lane;
    typename U::Raw raw[kUnroll][kRows];
    if (active) load_units<kType>(rows, u, u_end, raw);  // in flight while x is staged
    __syncthreads();                                     // the previous tile is no longer read
    stage_x<kTokens, U::kHasMin>(p, k0, len, tile);
    __syncthreads();
    if (!active) continue;
    for (;;) {
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) {
        if (u + 32 * j < u_end) dot_unit<kType, kTokens>(raw[j], u + 32 * j, k0, tile, acc);
      }
      u += 32 * kUnroll;
      if (u >= u_end) break;
      load_units<kType>(rows, u, u_end, raw);
    }
  }
  if (active) store_rows(acc, row0, p);
}

// Plain rows that are not a multiple of 16 bytes (odd shapes): one warp per
// row, element by element, a pass over the row per token.
template <WeightType kType>
__global__ void matvec_unaligned_kernel(MatvecParams p, int n_tokens) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (row >= p.w.n_rows) return;  // whole warps leave together
  const int lane = static_cast<int>(threadIdx.x % 32);
  const uint8_t* weights = p.w.row(row).quants;
  for (int t = 0; t < n_tokens; ++t) {
    const float* xt = p.x + static_cast<int64_t>(t) * p.w.row_length;
    float s = 0.0f;
    for (int e = lane; e < p.w.row_length; e += 32) {
      s = fmaf(cuda_layout::plain_value<kType>(weights, e), __ldg(xt + e), s);
    }
    s = warp_sum(s);
    if (lane == 0) p.y[t * p.w.n_rows + row] = s;
  }
}

// Rows [row0, row0 + n_rows) of a block-type matrix as f16, row-major with
// row_length columns; one thread per unit, each run stored as two 16-byte
// writes. Values are the CPU dequantizer's, then rounded to nearest f16.
template <WeightType kType>
__global__ void dequantize_f16_kernel(MatrixView w, int64_t row0, int64_t n_rows, __half* out) {
  using U = Unit<kType>;
  static_assert(U::kRunLen == 16);
  const int units_per_row = w.row_length / kUnitElems<kType>;
  const int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= n_rows * units_per_row) return;
  const int64_t r = g / units_per_row;
  const int u = static_cast<int>(g % units_per_row);
  const typename U::Raw raw = U::load(w.row(row0 + r), u);
#pragma unroll
  for (int run = 0; run < U::kRuns; ++run) {
    typename U::Run v;
    U::decode(raw, u, run, v);
    uint32_t words[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const uint32_t lo =
          __half_as_ushort(__float2half_rn(cuda_layout::exact_value<kType>(v, 2 * i)));
      const uint32_t hi =
          __half_as_ushort(__float2half_rn(cuda_layout::exact_value<kType>(v, 2 * i + 1)));
      words[i] = lo | (hi << 16);
    }
    auto* dst = reinterpret_cast<uint4*>(out + r * w.row_length + U::run_offset(u, run));
    dst[0] = make_uint4(words[0], words[1], words[2], words[3]);
    dst[1] = make_uint4(words[4], words[5], words[6], words[7]);
  }
}

__device__ __forceinline__ void round_to(float v, __half& out) { out = __float2half_rn(v); }
__device__ __forceinline__ void round_to(float v, __nv_bfloat16& out) {
  out = __float2bfloat16_rn(v);
}

template <typename Half>
__global__ void round_x_kernel(const float* x, int64_t n, Half* out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    round_to(x[i], out[i]);
  }
}

// Gather, block types: thread per (output row, unit); an index out of range
// gives a row of NaN.
template <WeightType kType>
__global__ void gather_units_kernel(MatrixView w, const int32_t* rows, int64_t n_out, float* out) {
  using U = Unit<kType>;
  const int units_per_row = w.row_length / kUnitElems<kType>;
  const int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= n_out * units_per_row) return;
  const int64_t i = g / units_per_row;
  const int u = static_cast<int>(g % units_per_row);
  const int32_t row = rows[i];
  const bool valid = row >= 0 && row < w.n_rows;
  typename U::Raw raw{};
  if (valid) raw = U::load(w.row(row), u);
  float* dst = out + i * w.row_length;
#pragma unroll
  for (int run = 0; run < U::kRuns; ++run) {
    typename U::Run v;
    U::decode(raw, u, run, v);
#pragma unroll
    for (int e = 0; e < U::kRunLen; ++e) {
      dst[U::run_offset(u, run) + e] = valid ? cuda_layout::exact_value<kType>(v, e) : NAN;
    }
  }
}

// Gather, plain types: thread per output element.
template <WeightType kType>
__global__ void gather_plain_kernel(MatrixView w, const int32_t* rows, int64_t n_out, float* out) {
  const int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= n_out * w.row_length) return;
  const int32_t row = rows[g / w.row_length];
  const bool valid = row >= 0 && row < w.n_rows;
  out[g] = valid ? cuda_layout::plain_value<kType>(w.row(row).quants, g % w.row_length) : NAN;
}

// ---------------------------------------------------------------------------
// Kernel launchers

template <WeightType kType>
using TypeTag = std::integral_constant<WeightType, kType>;

// fn(TypeTag<type>{}) for the types with CUDA kernels.
template <typename Fn>
void with_weight_type(WeightType type, Fn&& fn) {
  switch (type) {
    case WeightType::kF32:
      return fn(TypeTag<WeightType::kF32>{});
    case WeightType::kF16:
      return fn(TypeTag<WeightType::kF16>{});
    case WeightType::kBF16:
      return fn(TypeTag<WeightType::kBF16>{});
    case WeightType::kQ8_0:
      return fn(TypeTag<WeightType::kQ8_0>{});
    case WeightType::kQ4_0:
      return fn(TypeTag<WeightType::kQ4_0>{});
    case WeightType::kQ4_K:
      return fn(TypeTag<WeightType::kQ4_K>{});
    case WeightType::kQ5_K:
      return fn(TypeTag<WeightType::kQ5_K>{});
    case WeightType::kQ6_K:
      return fn(TypeTag<WeightType::kQ6_K>{});
    default:
      break;
  }
  STRATA_CHECK(false, "no CUDA kernels for weight type ", weight_type_name(type));
}

// The x tile's shared memory: kTokens x round_up(tile, 32) floats, then the sums.
int64_t xtile_bytes(int64_t tile, int n_tokens, bool sums) {
  const int64_t floats =
      n_tokens * cuda_layout::round_up(tile, 32) + (sums ? n_tokens * (tile / kRunSumElems) : 0);
  return floats * static_cast<int64_t>(sizeof(float));
}

// The longest tile that fits kMatvecSmemBytes: the whole row, or a multiple of kTileAlign.
int matvec_tile_elems(int64_t row_length, int n_tokens, bool sums) {
  const int64_t floats_per_elem_x16 = n_tokens * (sums ? 17 : 16);  // x, plus a sum per 16
  const int64_t fit =
      kMatvecSmemBytes / static_cast<int64_t>(sizeof(float)) * 16 / floats_per_elem_x16;
  const int64_t tile = std::min(row_length, fit / kTileAlign * kTileAlign);
  STRATA_CHECK(tile >= kTileAlign || tile == row_length, "x tile of ", tile, " elements");
  STRATA_CHECK(xtile_bytes(tile, n_tokens, sums) <= kMatvecSmemBytes, "x tile of ", tile,
               " elements");
  return static_cast<int>(tile);
}

template <WeightType kType, int kTokens>
void launch_matvec(MatvecParams p, cudaStream_t stream) {
  constexpr bool kSums = Unit<kType>::kHasMin;
  p.tile_elems = matvec_tile_elems(p.w.row_length, kTokens, kSums);
  const int64_t rows_per_block = kMatvecWarps * MatvecConfig<kType, kTokens>::kRows;
  const int64_t n_blocks = ceil_div(p.w.n_rows, rows_per_block);
  STRATA_CHECK(n_blocks <= INT_MAX, p.w.n_rows, " rows");
  const auto smem = static_cast<size_t>(xtile_bytes(p.tile_elems, kTokens, kSums));
  matvec_kernel<kType, kTokens>
      <<<static_cast<unsigned>(n_blocks), kMatvecThreads, smem, stream>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

template <WeightType kType>
void launch_matvec_tokens(const MatvecParams& p, int64_t n_tokens, cudaStream_t stream) {
  switch (n_tokens) {
    case 1:
      return launch_matvec<kType, 1>(p, stream);
    case 2:
      return launch_matvec<kType, 2>(p, stream);
    case 3:
      return launch_matvec<kType, 3>(p, stream);
    case 4:
      return launch_matvec<kType, 4>(p, stream);
    case 5:
      return launch_matvec<kType, 5>(p, stream);
    case 6:
      return launch_matvec<kType, 6>(p, stream);
    case 7:
      return launch_matvec<kType, 7>(p, stream);
    case 8:
      return launch_matvec<kType, 8>(p, stream);
    default:
      break;
  }
  STRATA_CHECK(false, n_tokens, " tokens for the matrix-vector kernel");
}
static_assert(CudaMatmul::kMaxVectorTokens == 8, "launch_matvec_tokens instantiates 1..8");

void matvec(const CudaWeightMatrix& w, const float* x, int64_t n_tokens, float* y,
            cudaStream_t stream) {
  const MatvecParams p{cuda_layout::matrix_view(w), x, y, 0,
                       reinterpret_cast<uintptr_t>(x) % 16 == 0};
  with_weight_type(w.type(), [&](auto tag) {
    constexpr WeightType kType = decltype(tag)::value;
    if constexpr (is_plain(kType)) {
      if (w.quant_row_bytes() % 16 != 0) {
        constexpr int kWarps = 8;
        const int64_t n_blocks = ceil_div(w.n_rows(), kWarps);
        STRATA_CHECK(n_blocks <= INT_MAX, w.n_rows(), " rows");
        matvec_unaligned_kernel<kType><<<static_cast<unsigned>(n_blocks), 32 * kWarps, 0, stream>>>(
            p, static_cast<int>(n_tokens));
        STRATA_CUDA_CHECK_LAUNCH();
        return;
      }
    }
    launch_matvec_tokens<kType>(p, n_tokens, stream);
  });
}

unsigned elementwise_blocks(int64_t n) {
  const int64_t blocks = ceil_div(n, kElementwiseThreads);
  STRATA_CHECK(blocks <= INT_MAX, n, " elements");
  return static_cast<unsigned>(blocks);
}

template <typename Half>
void round_x(const float* x, int64_t n, Half* out, cudaStream_t stream) {
  const unsigned blocks = std::min<unsigned>(elementwise_blocks(n), 4096);  // grid-stride beyond
  round_x_kernel<<<blocks, kElementwiseThreads, 0, stream>>>(x, n, out);
  STRATA_CUDA_CHECK_LAUNCH();
}

void dequantize_f16(const CudaWeightMatrix& w, int64_t row0, int64_t n_rows, __half* out,
                    cudaStream_t stream) {
  with_weight_type(w.type(), [&](auto tag) {
    constexpr WeightType kType = decltype(tag)::value;
    if constexpr (!is_plain(kType)) {
      const int64_t n_units = n_rows * (w.row_length() / kUnitElems<kType>);
      dequantize_f16_kernel<kType><<<elementwise_blocks(n_units), kElementwiseThreads, 0, stream>>>(
          cuda_layout::matrix_view(w), row0, n_rows, out);
      STRATA_CUDA_CHECK_LAUNCH();
    } else {
      STRATA_CHECK(false, "plain weights are not dequantized");
    }
  });
}

// y[:, row0 : row0 + n_rows] (row-major [n_tokens][ldc]) = rows of `weights` . x^T.
struct GemmArgs {
  const void* weights;  // [n_rows][row_length]
  cudaDataType_t weight_type;
  const void* x;  // [n_tokens][row_length]
  cudaDataType_t x_type;
  int64_t n_rows;
  int64_t row_length;
  int64_t n_tokens;
  float* y;     // y + row0
  int64_t ldc;  // all the rows of y
};

void gemm(cublasHandle_t handle, const GemmArgs& a) {
  STRATA_CHECK(
      a.n_rows <= INT_MAX && a.row_length <= INT_MAX && a.n_tokens <= INT_MAX && a.ldc <= INT_MAX,
      "GEMM of ", a.n_rows, " x ", a.row_length, " x ", a.n_tokens);
  const int m = static_cast<int>(a.n_rows), n = static_cast<int>(a.n_tokens),
            k = static_cast<int>(a.row_length);
  const float one = 1.0f, zero = 0.0f;
  STRATA_CUBLAS_CHECK(cublasGemmEx(
      handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a.weights, a.weight_type, k, a.x, a.x_type,
      k, &zero, a.y, CUDA_R_32F, static_cast<int>(a.ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// Grows a scratch buffer; waits for the stream first, since work queued on it
// may still read the old allocation.
void reserve_scratch(DeviceBuffer& buffer, int64_t bytes, cudaStream_t stream) {
  if (static_cast<size_t>(bytes) <= buffer.bytes()) return;
  STRATA_CUDA_CHECK(cudaStreamSynchronize(stream));
  buffer.reserve(static_cast<size_t>(bytes));
}

bool overlaps(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  const auto a_begin = reinterpret_cast<uintptr_t>(a), b_begin = reinterpret_cast<uintptr_t>(b);
  return a_begin < b_begin + static_cast<uintptr_t>(b_bytes) &&
         b_begin < a_begin + static_cast<uintptr_t>(a_bytes);
}

}  // namespace

CudaMatmul::CudaMatmul(cudaStream_t stream) : stream_(stream) {
  cublasHandle_t handle = nullptr;
  STRATA_CUBLAS_CHECK(cublasCreate(&handle));
  cublas_ = handle;
  const cublasStatus_t status = cublasSetStream(handle, stream);
  if (status != CUBLAS_STATUS_SUCCESS) {
    cublasDestroy(handle);  // the destructor does not run for a throwing constructor
    STRATA_CUBLAS_CHECK(status);
  }
}

CudaMatmul::~CudaMatmul() {
  if (cublas_ != nullptr) cublasDestroy(static_cast<cublasHandle_t>(cublas_));
}

bool CudaMatmul::fuses_swiglu(const CudaWeightMatrix& w_gate_up, int64_t n_tokens) const {
  // run() takes the same kernel for these too (F16 up to kMaxVectorTokens,
  // which kMaxMmaSwigluTokens does not pass).
  static_assert(kMaxMmaSwigluTokens <= kMaxVectorTokens);
  return cuda_kquant_decode_swiglu_supports(w_gate_up, n_tokens) ||
         cuda_mma_swiglu_supports(w_gate_up, n_tokens);
}

void CudaMatmul::run_swiglu(const CudaWeightMatrix& w_gate_up, const float* x, int64_t n_tokens,
                            float* out, const uint8_t* x_staged) {
  STRATA_CHECK(x != nullptr && out != nullptr, "null x or out");
  STRATA_CHECK(!overlaps(x, n_tokens * w_gate_up.row_length() * 4, out,
                         n_tokens * w_gate_up.n_rows() / 2 * 4),
               "x and out overlap");
  if (cuda_kquant_decode_swiglu_supports(w_gate_up, n_tokens)) {
    return cuda_kquant_decode_swiglu(w_gate_up, x, n_tokens, out, stream_, x_staged);
  }
  cuda_mma_swiglu(w_gate_up, x, n_tokens, out, stream_);
}

void CudaMatmul::run(const CudaWeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                     const uint8_t* x_staged) {
  STRATA_CHECK(n_tokens >= 1, n_tokens, " tokens");
  STRATA_CHECK(w.n_rows() > 0 && w.quants() != nullptr, "matmul with an empty weight matrix");
  STRATA_CHECK(x != nullptr && y != nullptr, "null x or y");
  const int64_t n_rows = w.n_rows(), row_length = w.row_length();
  STRATA_CHECK(!overlaps(x, n_tokens * row_length * 4, y, n_tokens * n_rows * 4),
               "x and y overlap");
  if (cuda_kquant_decode_supports(w, n_tokens)) {
    return cuda_kquant_decode(w, x, n_tokens, y, stream_, x_staged);
  }
  // Tensor cores for every other decode batch of block types (and F16 up to the
  // matrix-vector size: above it cuBLAS reads F16 weights as they are).
  const bool tensor_cores = w.type() == WeightType::kF16 ? n_tokens <= kMaxVectorTokens
                                                          : n_tokens <= kMaxMmaTokens;
  if (tensor_cores && cuda_mma_supports(w, n_tokens)) {
    const int64_t scratch = cuda_mma_scratch_floats(w, n_tokens);
    reserve_scratch(mma_scratch_, scratch * 4, stream_);
    return cuda_mma_matmul(w, x, n_tokens, y, mma_scratch_.as<float>(), stream_);
  }
  if (n_tokens <= kMaxVectorTokens) return matvec(w, x, n_tokens, y, stream_);

  auto* handle = static_cast<cublasHandle_t>(cublas_);
  const int64_t n_x = n_tokens * row_length;
  switch (w.type()) {
    case WeightType::kF32:
      return gemm(handle,
                  {w.quants(), CUDA_R_32F, x, CUDA_R_32F, n_rows, row_length, n_tokens, y, n_rows});
    case WeightType::kBF16:
      reserve_scratch(half_inputs_, n_x * 2, stream_);
      round_x(x, n_x, half_inputs_.as<__nv_bfloat16>(), stream_);
      return gemm(handle, {w.quants(), CUDA_R_16BF, half_inputs_.data(), CUDA_R_16BF, n_rows,
                           row_length, n_tokens, y, n_rows});
    default:
      break;
  }
  reserve_scratch(half_inputs_, n_x * 2, stream_);
  round_x(x, n_x, half_inputs_.as<__half>(), stream_);
  if (w.type() == WeightType::kF16) {
    return gemm(handle, {w.quants(), CUDA_R_16F, half_inputs_.data(), CUDA_R_16F, n_rows,
                         row_length, n_tokens, y, n_rows});
  }
  // Block types: dequantize a tile of rows to f16, multiply, next tile (the
  // stream orders each tile's GEMM before the next dequantization).
  const int64_t row_bytes = row_length * 2;
  const int64_t tile_rows =
      std::min(n_rows, std::max<int64_t>(1, kHalfWeightTileBytes / row_bytes / 256 * 256));
  reserve_scratch(half_weights_, tile_rows * row_bytes, stream_);
  for (int64_t row0 = 0; row0 < n_rows; row0 += tile_rows) {
    const int64_t rows = std::min(tile_rows, n_rows - row0);
    dequantize_f16(w, row0, rows, half_weights_.as<__half>(), stream_);
    gemm(handle, {half_weights_.data(), CUDA_R_16F, half_inputs_.data(), CUDA_R_16F, rows,
                  row_length, n_tokens, y + row0, n_rows});
  }
}

void cuda_gather_rows(const CudaWeightMatrix& w, const int32_t* rows, int64_t n_rows, float* out,
                      cudaStream_t stream) {
  STRATA_CHECK(n_rows >= 0, n_rows, " rows to gather");
  if (n_rows == 0) return;
  STRATA_CHECK(rows != nullptr && out != nullptr && w.quants() != nullptr,
               "gather with null pointers");
  const MatrixView view = cuda_layout::matrix_view(w);
  with_weight_type(w.type(), [&](auto tag) {
    constexpr WeightType kType = decltype(tag)::value;
    if constexpr (is_plain(kType)) {
      gather_plain_kernel<kType>
          <<<elementwise_blocks(n_rows * w.row_length()), kElementwiseThreads, 0, stream>>>(
              view, rows, n_rows, out);
    } else {
      const int64_t n_units = n_rows * (w.row_length() / kUnitElems<kType>);
      gather_units_kernel<kType><<<elementwise_blocks(n_units), kElementwiseThreads, 0, stream>>>(
          view, rows, n_rows, out);
    }
    STRATA_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace strata
