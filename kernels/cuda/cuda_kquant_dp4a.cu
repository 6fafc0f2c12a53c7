// The dp4a decode kernel of cuda_kquant_decode (shared parts:
// cuda_kquant_common.cuh), for one token of Q4_K or Q6_K: a warp per row at
// a time, 8 blocks a step. Q4_K:
// lane l takes quarter c = l % 4 of block 8 * step + l / 4, i.e. qs bytes
// 32c .. 32c + 31 (two 16-byte loads), whose low nibbles are sub-block 2c
// and high nibbles sub-block 2c + 1, dotted with x by dp4a; the block's
// four lanes add their integer sums by shuffles. Q6_K: lane l takes
// half h = c / 2 and pair kk = c % 2 of its block: ql bytes 64h + 32kk ..
// + 31, whose low nibbles are row elements 128h + 32kk + l and high nibbles
// 128h + 32(kk + 2) + l, with their top two bits from qh bytes 32h .. + 31
// (bits 2k, k = kk or kk + 2): four sub-blocks of 16. A warp's rows are output
// rows w, w + (warps in the grid), ... and its steps one stream of loads,
// kDepth steps ahead, across rows.
#include "kernels/cuda/cuda_kquant_common.cuh"
#include "kernels/cuda/cuda_swiglu.cuh"

namespace strata::kquant {
namespace {

// Steps of a warp whose loads are in flight: a Q6_K share is 84 bytes to
// Q4_K's 48, so fewer of them fit without spills.
template <WeightType kType>
constexpr int kDepth = kType == WeightType::kQ4_K ? 4 : 2;

// Warps of a thread block, one block an SM (a row's sums stay within its
// warp): where x is not staged before the product (at one token, rows of
// up to 4,096: cuda_kquant_decode_wants_staged_x) each block quantizes all
// of x for itself, so half as many blocks as with 8 warps quantize it half
// as many times (8B Q4_K batch 1: +3%).
constexpr int kDp4aWarps = 16;
constexpr int kDp4aThreads = 32 * kDp4aWarps;

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

// c + the dot product of a's 4 unsigned bytes and b's 4 signed bytes.
__device__ __forceinline__ int dot4_unsigned_signed(uint32_t a, int b, int c) {
  int d;
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// acc[t] += block `block`'s term for token t (block_term), for the real
// tokens: the lane's integer sums of its quarter, added over the block's
// four lanes (integers: any order), then the term, the same in all four.
// A lane past the row's blocks has a zero quarter (and reads x's last
// block): its term is zero, and adding it leaves acc as it was.
template <int kTokens>
__device__ __forceinline__ void dot_quarter(const Quarter& q, int block, int c,
                                            const KQuantParams& p, const uint8_t* smem,
                                            float (&acc)[kTokens]) {
  const uint32_t words[8] = {q.low.x,  q.low.y,  q.low.z,  q.low.w,
                             q.high.x, q.high.y, q.high.z, q.high.w};
  // The high nibbles stay where they are, as 16 times their value (unsigned
  // bytes): one instruction a word fewer, and the sum divides by 16 exactly.
  uint32_t low[8], high16[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    low[i] = words[i] & 0x0f0f0f0fu;
    high16[i] = words[i] & 0xf0f0f0f0u;
  }
  const SubBlockScales s = sub_block_scales(q.meta, c);
  // swizzled_unit's for all four units: bits 3-4 of 16 * block + 4c, i.e.
  // the block's parity and c / 2. The block is 8 * step + lane / 4 (lane /
  // 4's parity, every step), or clamped for a lane past the row's blocks,
  // whose quarter is zero: any order of its units gives its zero term.
  const int lane_parity = static_cast<int>(threadIdx.x / 4) & 1;
  const int swizzle = (lane_parity << 1) | (c >> 1);
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
    int dot_low = 0, dot_high16 = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      dot_low = dot4_unsigned_signed(low[i], xs[i], dot_low);
      dot_high16 = dot4_unsigned_signed(high16[i], xs[8 + i], dot_high16);
    }
    const int dot_high = dot_high16 >> 4;
    const int2 sums = *reinterpret_cast<const int2*>(x.sums + 8 * block + 2 * c);
    int scaled = s.scale[0] * dot_low + s.scale[1] * dot_high;
    int shifted = s.min[0] * sums.x + s.min[1] * sums.y;
    scaled += __shfl_xor_sync(0xffffffffu, scaled, 1);
    scaled += __shfl_xor_sync(0xffffffffu, scaled, 2);
    shifted += __shfl_xor_sync(0xffffffffu, shifted, 1);
    shifted += __shfl_xor_sync(0xffffffffu, shifted, 2);
    acc[t] = __fadd_rn(acc[t], block_term(q.meta.x, x.scales[block], scaled, shifted));
  }
}

// A lane's share of one step of a Q6_K row (see the top): ql and qh bytes,
// the block's 16 int8 sub-block scales and its fp16 d.
struct Q6Share {
  uint4 ql_low, ql_high;  // ql bytes 64h + 32kk .. + 15, + 16 .. + 31
  uint4 qh_low, qh_high;  // qh bytes 32h .. + 15, + 16 .. + 31
  uint4 scales;
  uint32_t d;
};

__device__ __forceinline__ Q6Share load_q6_share(const RowView& row, int block, int c) {
  const int h = c / 2, kk = c % 2;
  const uint8_t* ql = row.quants + kQ6BlockBytes * block + 64 * h + 32 * kk;
  const uint8_t* qh = row.quants + kQ6BlockBytes * block + 128 + 32 * h;
  return {cuda_layout::load_chunk(ql),
          cuda_layout::load_chunk(ql + 16),
          cuda_layout::load_chunk(qh),
          cuda_layout::load_chunk(qh + 16),
          __ldg(reinterpret_cast<const uint4*>(row.meta + 16 * block)),
          cuda_layout::load_u16(row.meta + 16 * row.n_blocks + 2 * block)};
}

// acc[t] += block `block`'s term for token t, as the CPU's dot_q6_k rounds
// it: (d * x_d) * sum over sub-blocks of scale * ((q - 32) . x), the q - 32
// taken as q . x - 32 * (x's sum over the sub-block); the lane's integer sum
// added over the block's four lanes first. A lane past the row's blocks has
// zero d: its term is zero.
template <int kTokens>
__device__ __forceinline__ void dot_q6_share(const Q6Share& q, int block, int c,
                                             const KQuantParams& p, const uint8_t* smem,
                                             float (&acc)[kTokens]) {
  const int h = c / 2, kk = c % 2;
  const uint32_t ql[8] = {q.ql_low.x,  q.ql_low.y,  q.ql_low.z,  q.ql_low.w,
                          q.ql_high.x, q.ql_high.y, q.ql_high.z, q.ql_high.w};
  const uint32_t qh[8] = {q.qh_low.x,  q.qh_low.y,  q.qh_low.z,  q.qh_low.w,
                          q.qh_high.x, q.qh_high.y, q.qh_high.z, q.qh_high.w};
  int quants[2][8];  // [k = kk, kk + 2][word]: 6-bit q of 4 elements
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int k = kk + 2 * half;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      quants[half][i] = static_cast<int>(((ql[i] >> (4 * half)) & 0x0f0f0f0fu) |
                                         (((qh[i] >> (2 * k)) & 0x03030303u) << 4));
    }
  }
#pragma unroll
  for (int t = 0; t < kTokens; ++t) {
    if (t >= p.n_tokens) break;
    const StagedToken x = staged_token(p, smem, t);
    const int4* units = reinterpret_cast<const int4*>(x.quants);
    int scaled = 0;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int k = kk + 2 * half;
      const int u = 16 * block + 8 * h + 2 * k;  // x's 32 elements 128h + 32k ..: two units
#pragma unroll
      for (int m = 0; m < 2; ++m) {  // sub-block 8h + 2k + m: 16 elements, one unit
        const int4 xm = units[swizzled_unit(u + m)];
        const int xs[4] = {xm.x, xm.y, xm.z, xm.w};
        int dot = 0;
#pragma unroll
        for (int i = 0; i < 4; ++i) dot = __dp4a(quants[half][4 * m + i], xs[i], dot);
        const int sub = 8 * h + 2 * k + m;
        scaled += q6_scale(q.scales, sub) * (dot - 32 * x.sums16[16 * block + sub]);
      }
    }
    scaled += __shfl_xor_sync(0xffffffffu, scaled, 1);
    scaled += __shfl_xor_sync(0xffffffffu, scaled, 2);
    acc[t] = __fadd_rn(acc[t], q6_block_term(q.d, x.scales[block], scaled));
  }
}

// ---------------------------------------------------------------------------
// The kernel

template <WeightType kType, int kTokens>
__global__ void __launch_bounds__(kDp4aThreads, 1) dp4a_decode_kernel(KQuantParams p) {
  using Share = std::conditional_t<kType == WeightType::kQ4_K, Quarter, Q6Share>;
  extern __shared__ __align__(16) uint8_t smem[];
  let_next_kernel_start();  // it waits for this kernel's writes before it reads them
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int c = lane % 4, lane_block = lane / 4;
  const int n_blocks = p.w.n_blocks;
  const int steps = (n_blocks + kBlocksPerStep - 1) / kBlocksPerStep;
  const bool swiglu = p.swiglu_n > 0;
  // A warp's rows: with the fused SwiGLU, output o's gate row, then its up
  // row. Shifts, not divisions: this runs every step.
  const int row_shift = swiglu ? 1 : 0;
  const int64_t n_outputs = swiglu ? p.swiglu_n : p.w.n_rows;
  // A warp's outputs are one run of consecutive rows (the runs' lengths
  // differ by at most one), so the weights it streams are contiguous.
  const int64_t n_warps = static_cast<int64_t>(gridDim.x) * kDp4aWarps;
  const int64_t warp_id = static_cast<int64_t>(blockIdx.x) * kDp4aWarps + warp;
  const int64_t first = warp_id * n_outputs / n_warps;
  const int n_outputs_mine = static_cast<int>((warp_id + 1) * n_outputs / n_warps - first);
  const int n_rows_mine = n_outputs_mine << row_shift;

  const auto output_of = [&](int row) { return first + (row >> row_shift); };
  const auto row_view = [&](int row) {  // a warp without rows: any row, never read
    const int64_t out = min(output_of(row), n_outputs - 1);
    return p.w.row((row & row_shift) == 0 ? out : p.swiglu_n + out);
  };
  // The loads run one cursor ahead of the sums (kDepth steps), with the
  // view of the row they are in: computed once a row, not once a step.
  // Past the row's blocks or the warp's rows a lane's share is zero: a
  // branch, not a select on the loaded registers, which would wait for them.
  Cursor next;
  RowView next_row = row_view(0);
  const auto load = [&](Share& q) {
    const int block = kBlocksPerStep * next.step + lane_block;
    if (next.row < n_rows_mine && block < n_blocks) {
      if constexpr (kType == WeightType::kQ4_K) {
        q = load_quarter(next_row, block, c);
      } else {
        q = load_q6_share(next_row, block, c);
      }
    } else {
      q = Share{};
    }
    if (++next.step == steps) {
      next.step = 0;
      if (++next.row < n_rows_mine) next_row = row_view(next.row);
    }
  };
  const auto advance = [&](Cursor& at) {
    if (++at.step == steps) {
      at.step = 0;
      ++at.row;
    }
  };

  Share quarters[kDepth<kType>];
#pragma unroll
  for (int r = 0; r < kDepth<kType>; ++r) load(quarters[r]);
  wait_for_prior_kernels();  // x is theirs (the weights above are not)
  stage_q8k<kDp4aWarps>(p, smem);
  __syncthreads();

  float acc[kTokens] = {}, gate[kTokens] = {};
  Cursor at;
  for (int i0 = 0; i0 < n_rows_mine * steps; i0 += kDepth<kType>) {
#pragma unroll
    for (int r = 0; r < kDepth<kType>; ++r) {
      if (at.row >= n_rows_mine) break;  // the same for the whole warp
      const int block = min(kBlocksPerStep * at.step + lane_block, n_blocks - 1);
      if constexpr (kType == WeightType::kQ4_K) {
        dot_quarter<kTokens>(quarters[r], block, c, p, smem, acc);
      } else {
        dot_q6_share<kTokens>(quarters[r], block, c, p, smem, acc);
      }
      load(quarters[r]);
      if (at.step == steps - 1) {  // the row's last step: its sums
        const int64_t out = output_of(at.row);
#pragma unroll
        for (int t = 0; t < kTokens; ++t) {
          float sum = acc[t];  // the 8 lane blocks' sums, as sum_of_eight adds them
          sum = __fadd_rn(sum, __shfl_xor_sync(0xffffffffu, sum, 16));
          sum = __fadd_rn(sum, __shfl_xor_sync(0xffffffffu, sum, 8));
          sum = __fadd_rn(sum, __shfl_xor_sync(0xffffffffu, sum, 4));
          acc[t] = 0.0f;
          if (t >= p.n_tokens) continue;
          if (swiglu && (at.row & 1) == 0) {
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

// fn(token count the kernel is compiled for), for n_tokens <= kMaxDp4aTokens.
template <WeightType kType, typename Fn>
void with_token_bucket(int64_t n_tokens, Fn&& fn) {
  if constexpr (kMaxDp4aTokens <= 1) {
    return fn(std::integral_constant<int, 1>{});
  } else {
    if (n_tokens <= 1) return fn(std::integral_constant<int, 1>{});
    if (n_tokens <= 2) return fn(std::integral_constant<int, 2>{});
    if (n_tokens <= 4) return fn(std::integral_constant<int, 4>{});
    return fn(std::integral_constant<int, 8>{});
  }
}

template <WeightType kType>
void launch_typed(const KQuantParams& p, int64_t n_outputs, cudaStream_t stream) {
  const auto smem_bytes = static_cast<size_t>(int64_t{p.n_tokens} * p.token_bytes);
  with_token_bucket<kType>(p.n_tokens, [&](auto bucket) {
    launch_over(dp4a_decode_kernel<kType, decltype(bucket)::value>, n_outputs, kDp4aWarps,
                static_cast<int64_t>(smem_bytes), p, stream, kDp4aThreads);
  });
}

}  // namespace

void launch_dp4a_decode(const KQuantParams& p, int64_t n_outputs, WeightType type,
                        cudaStream_t stream) {
  if (type == WeightType::kQ6_K) return launch_typed<WeightType::kQ6_K>(p, n_outputs, stream);
  launch_typed<WeightType::kQ4_K>(p, n_outputs, stream);
}

}  // namespace strata::kquant
