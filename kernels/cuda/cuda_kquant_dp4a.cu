// The one-token Q6_K decode kernel of cuda_kquant_decode (shared parts:
// cuda_kquant_common.cuh): a warp per row at a time, 8 blocks a step. Lane l
// takes half h = c / 2 and pair kk = c % 2 (c = l % 4) of block
// 8 * step + l / 4: ql bytes 64h + 32kk .. + 31, whose low nibbles are row
// elements 128h + 32kk + l and high nibbles 128h + 32(kk + 2) + l, with
// their top two bits from qh bytes 32h .. + 31 (bits 2k, k = kk or kk + 2):
// four sub-blocks of 16, dotted with x by dp4a; the block's four lanes add
// their integer sums by shuffles. A warp's rows are one run of consecutive
// outputs, and its steps one stream of loads, kDepth steps ahead, across
// rows. (One-token Q4_K takes a whole block a lane: cuda_kquant_block_lanes.cu.)
#include "kernels/cuda/cuda_kquant_common.cuh"
#include "kernels/cuda/cuda_swiglu.cuh"

namespace strata::kquant {
namespace {

// Steps of a warp whose loads are in flight: a share is 84 bytes, so
// that more of them do not fit without spills.
constexpr int kDepth = 2;

// Warps of a thread block, one block an SM (a row's sums stay within its
// warp): where x is not staged before the product (at one token, rows of
// up to 4,096: cuda_kquant_decode_wants_staged_x) each block quantizes all
// of x for itself, so half as many blocks as with 8 warps quantize it half
// as many times (8B Q4_K batch 1: +3%).
constexpr int kDp4aWarps = 16;
constexpr int kDp4aThreads = 32 * kDp4aWarps;

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

template <int kTokens>
__global__ void __launch_bounds__(kDp4aThreads, 1) dp4a_decode_kernel(KQuantParams p) {
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
  const auto load = [&](Q6Share& q) {
    const int block = kBlocksPerStep * next.step + lane_block;
    if (next.row < n_rows_mine && block < n_blocks) {
      q = load_q6_share(next_row, block, c);
    } else {
      q = Q6Share{};
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

  Q6Share shares[kDepth];
#pragma unroll
  for (int r = 0; r < kDepth; ++r) load(shares[r]);
  wait_for_prior_kernels();  // x is theirs (the weights above are not)
  stage_q8k<kDp4aWarps>(p, smem);
  __syncthreads();

  float acc[kTokens] = {}, gate[kTokens] = {};
  Cursor at;
  for (int i0 = 0; i0 < n_rows_mine * steps; i0 += kDepth) {
#pragma unroll
    for (int r = 0; r < kDepth; ++r) {
      if (at.row >= n_rows_mine) break;  // the same for the whole warp
      const int block = min(kBlocksPerStep * at.step + lane_block, n_blocks - 1);
      dot_q6_share<kTokens>(shares[r], block, c, p, smem, acc);
      load(shares[r]);
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
template <typename Fn>
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

}  // namespace

void launch_dp4a_decode(const KQuantParams& p, int64_t n_outputs, cudaStream_t stream) {
  const auto smem_bytes = static_cast<size_t>(int64_t{p.n_tokens} * p.token_bytes);
  with_token_bucket(p.n_tokens, [&](auto bucket) {
    launch_over(dp4a_decode_kernel<decltype(bucket)::value>, n_outputs, kDp4aWarps,
                static_cast<int64_t>(smem_bytes), p, stream, kDp4aThreads);
  });
}

}  // namespace strata::kquant
