// The two-to-eight-token decode kernel of cuda_kquant_decode (shared parts:
// cuda_kquant_common.cuh): the integer dots of 16 rows and 8 tokens on
// tensor cores, a sub-block a k-step (Q4_K: mma m16n8k32 s8 on 32 weights;
// Q6_K: m16n8k16 on 16), warp w of a block taking blocks w, w + 8, ... of
// the block's group of rows. In the dp4a kernel each token costs a lane 16
// dp4a a step; here one mma serves all 8 tokens.
#include "kernels/cuda/cuda_kquant_common.cuh"
#include "kernels/cuda/cuda_swiglu.cuh"

namespace strata::kquant {
namespace {

// c = a (16 x 32, int8) times b (32 x 8, int8), fresh int32 sums:
// a0 = A[g][4t..4t+3], a1 = A[g+8][4t..], a2 = A[g][16+4t..], a3 = A[g+8][16+4t..];
// b0 = B[4t..4t+3][g], b1 = B[16+4t..][g]; c = C[g][2t], C[g][2t+1], C[g+8][2t], C[g+8][2t+1].
__device__ __forceinline__ void mma_s8(int (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                       uint32_t a3, uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%10, %10, %10, %10};"
      : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(0));
}

// c = a (16 x 16, int8) times b (16 x 8, int8), fresh int32 sums:
// a0 = A[g][4t..4t+3], a1 = A[g+8][4t..]; b0 = B[4t..4t+3][g]; c as above.
__device__ __forceinline__ void mma_s8_k16(int (&c)[4], uint32_t a0, uint32_t a1, uint32_t b0) {
  asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
      "{%7, %7, %7, %7};"
      : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
      : "r"(a0), "r"(a1), "r"(b0), "r"(0));
}

__device__ __forceinline__ uint32_t load_four_bytes(const uint8_t* at) {
  uint32_t v;
  asm("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(v) : "l"(at));
  return v;
}

__device__ __forceinline__ uint2 load_eight_bytes(const uint8_t* at) {
  uint2 v;
  asm("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(at));
  return v;
}

// A lane's share of one block of its warp's 16 rows: of rows g and g + 8
// (lane g = lane / 4, t = lane % 4), qs bytes 32c + 8t .. + 7 for c = 0..3
// (the 8 weights of sub-blocks 2c and 2c + 1 that the mma's k columns
// 4t.. and 16 + 4t.. take), and the rows' 16 meta bytes.
struct RowPairBlock {
  uint2 qs[2][4];
  uint4 meta[2];
};

__device__ __forceinline__ RowPairBlock load_row_pair_block(const RowView (&rows)[2], int block,
                                                            int t) {
  RowPairBlock b;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const uint8_t* qs = rows[r].quants + kBlockQuantBytes * block + 8 * t;
#pragma unroll
    for (int c = 0; c < 4; ++c) b.qs[r][c] = load_eight_bytes(qs + 32 * c);
    b.meta[r] = __ldg(reinterpret_cast<const uint4*>(rows[r].meta + 16 * block));
  }
  return b;
}

// Byte j of the 8 six-bit scales (scales = true) or minimums of a Q4_K
// block (ggml's get_scale_min_k4; cuda_kquant_block_lanes.cu unpacks them
// the same way, four to a word).
__device__ __forceinline__ int six_bit_value(uint4 meta, int j, bool scales) {
  const uint32_t low = scales ? meta.y : meta.z;
  const uint32_t packed = j < 4 ? low & 0x3f3f3f3fu
                                : (scales ? meta.w & 0x0f0f0f0fu : (meta.w >> 4) & 0x0f0f0f0fu) |
                                      ((low >> 2) & 0x30303030u);
  return static_cast<int>((packed >> (8 * (j % 4))) & 0xffu);
}

// acc[i] += block `block`'s term (block_term) for the lane's four outputs,
// i = 2 * (row g + 8?) + (token 2t + 1?). Sub-block j = 2c + h is one mma:
// its weights are nibble h of the lane's bytes, its x token g's 8 bytes at
// 64c + 32h + 8t (zeros for padding tokens).
__device__ void mma_block(const RowPairBlock& w, int block, int g, int t, const KQuantParams& p,
                          const uint8_t* smem, float (&acc)[4]) {
  int scaled[4] = {}, shifted[4] = {};
  const bool real_b = g < p.n_tokens;
  const uint8_t* xq = smem + min(g, p.n_tokens - 1) * p.token_bytes;
#pragma unroll
  for (int c = 0; c < 4; ++c) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int j = 2 * c + h, shift = 4 * h;
      const int u = 16 * block + 4 * c + 2 * h + t / 2;  // x's 16-byte unit, then its half
      uint2 b = make_uint2(0, 0);
      if (real_b) b = *reinterpret_cast<const uint2*>(xq + 16 * swizzled_unit(u) + 8 * (t % 2));
      int dots[4];
      mma_s8(dots, (w.qs[0][c].x >> shift) & 0x0f0f0f0fu, (w.qs[1][c].x >> shift) & 0x0f0f0f0fu,
             (w.qs[0][c].y >> shift) & 0x0f0f0f0fu, (w.qs[1][c].y >> shift) & 0x0f0f0f0fu, b.x,
             b.y);
#pragma unroll
      for (int i = 0; i < 4; ++i) scaled[i] += six_bit_value(w.meta[i / 2], j, true) * dots[i];
    }
  }
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const int token = min(2 * t + k, p.n_tokens - 1);  // past the real tokens: never stored
    const StagedToken x = staged_token(p, smem, token);
    const int4 s0 = *reinterpret_cast<const int4*>(x.sums + 8 * block);
    const int4 s1 = *reinterpret_cast<const int4*>(x.sums + 8 * block + 4);
    const int sums[8] = {s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int i = 2 * r + k;
#pragma unroll
      for (int j = 0; j < 8; ++j) shifted[i] += six_bit_value(w.meta[r], j, false) * sums[j];
      acc[i] = __fadd_rn(acc[i], block_term(w.meta[r].x, x.scales[block], scaled[i], shifted[i]));
    }
  }
}

// A lane's share of one Q6_K block of its warp's 16 rows, rows g and g + 8:
// for each 16-weight sub-block 8h + 2k + m, the mma's k columns 4t .. 4t + 3
// take its elements 16m + 4t .. + 3 of 128h + 32k: low nibbles (k < 2) or
// high (k >= 2) of ql word 64h + 32(k % 2) + 16m + 4t, top bits 2k of qh
// word 32h + 16m + 4t; and the rows' 16 int8 scales and fp16 d.
struct Q6RowPairBlock {
  uint32_t ql[2][8];  // [row][4h + 2(k % 2) + m]
  uint32_t qh[2][4];  // [row][2h + m]
  uint4 scales[2];
  uint32_t d[2];
};

__device__ __forceinline__ Q6RowPairBlock load_q6_row_pair_block(const RowView (&rows)[2],
                                                                 int block, int t) {
  Q6RowPairBlock b;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const uint8_t* quants = rows[r].quants + kQ6BlockBytes * block + 4 * t;
#pragma unroll
    for (int i = 0; i < 8; ++i) b.ql[r][i] = load_four_bytes(quants + 64 * (i / 4) + 16 * (i % 4));
#pragma unroll
    for (int i = 0; i < 4; ++i) b.qh[r][i] = load_four_bytes(quants + 128 + 16 * i);
    b.scales[r] = __ldg(reinterpret_cast<const uint4*>(rows[r].meta + 16 * block));
    b.d[r] = cuda_layout::load_u16(rows[r].meta + 16 * rows[r].n_blocks + 2 * block);
  }
  return b;
}

// acc[i] += block `block`'s term for the lane's four outputs, as the dp4a
// kernel's dot_q6_share forms it: (d * x_d) * sum over sub-blocks of scale
// * (q . x - 32 * x's sum over the sub-block).
__device__ void mma_q6_block(const Q6RowPairBlock& w, int block, int g, int t,
                             const KQuantParams& p, const uint8_t* smem, float (&acc)[4]) {
  int scaled[4] = {};
  const bool real_b = g < p.n_tokens;
  const uint8_t* xq = smem + min(g, p.n_tokens - 1) * p.token_bytes;
  int sums[2][16];  // tokens 2t, 2t + 1: x's sums of the block's 16-quant groups
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const StagedToken x = staged_token(p, smem, min(2 * t + k, p.n_tokens - 1));
#pragma unroll
    for (int i = 0; i < 16; ++i) sums[k][i] = x.sums16[16 * block + i];
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
#pragma unroll
      for (int m = 0; m < 2; ++m) {
        const int sub = 8 * h + 2 * k + m, ql = 4 * h + 2 * (k % 2) + m, qh = 2 * h + m;
        uint32_t a[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          a[r] = ((w.ql[r][ql] >> (4 * (k / 2))) & 0x0f0f0f0fu) |
                 (((w.qh[r][qh] >> (2 * k)) & 0x03030303u) << 4);
        }
        const int u = 16 * block + sub;  // x's 16-byte unit of the sub-block
        const uint32_t b =
            real_b ? *reinterpret_cast<const uint32_t*>(xq + 16 * swizzled_unit(u) + 4 * t) : 0u;
        int dots[4];
        mma_s8_k16(dots, a[0], a[1], b);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          scaled[i] += q6_scale(w.scales[i / 2], sub) * (dots[i] - 32 * sums[i % 2][sub]);
        }
      }
    }
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const StagedToken x = staged_token(p, smem, min(2 * t + i % 2, p.n_tokens - 1));
    acc[i] = __fadd_rn(acc[i], q6_block_term(w.d[i / 2], x.scales[block], scaled[i]));
  }
}

// Decode products of 2 to 8 tokens: a block per 16 rows (with the fused
// SwiGLU: 8 gate rows and their 8 up rows) at a time, walking row groups
// blockIdx.x, + gridDim.x, ...; warp w takes the group's Q4_K blocks w, w +
// 8, ... in order (the dp4a kernel's lane block w), loads two blocks ahead
// across groups, and the 8 warps' sums of a group meet in one of two shared
// buffers, added by sum_of_eight: each token gets the bits the one-token
// kernel gives it.
template <WeightType kType>
__global__ void __launch_bounds__(kThreads, 2) mma_decode_kernel(KQuantParams p) {
  using Share = std::conditional_t<kType == WeightType::kQ4_K, RowPairBlock, Q6RowPairBlock>;
  extern __shared__ __align__(16) uint8_t smem[];
  let_next_kernel_start();  // it waits for this kernel's writes before it reads them
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int g = lane / 4, t = lane % 4;
  const int n_blocks = p.w.n_blocks;
  const int my_steps = warp < n_blocks ? (n_blocks - warp + kWarps - 1) / kWarps : 0;
  const bool swiglu = p.swiglu_n > 0;
  const int64_t n_outputs = swiglu ? p.swiglu_n : p.w.n_rows;
  const int outputs_per_group = swiglu ? 8 : 16;
  const int64_t n_groups = (n_outputs + outputs_per_group - 1) / outputs_per_group;
  const int my_groups = blockIdx.x < n_groups
                            ? static_cast<int>((n_groups - blockIdx.x + gridDim.x - 1) / gridDim.x)
                            : 0;

  // The lane's rows of its block's group i, clamped to real rows (whose
  // outputs past the end are never written).
  const auto rows_of = [&](int i, RowView(&rows)[2]) {
    const int64_t group = blockIdx.x + static_cast<int64_t>(i) * gridDim.x;
    int64_t r0 = group * 16 + g, r1 = r0 + 8;
    if (swiglu) {
      r0 = min(group * 8 + g, p.swiglu_n - 1);
      r1 = p.swiglu_n + r0;
    }
    rows[0] = p.w.row(min(r0, p.w.n_rows - 1));
    rows[1] = p.w.row(min(r1, p.w.n_rows - 1));
  };
  Cursor next;  // row: the group, step: the warp's step in it
  const auto load_next = [&](Share& b) {
    if (my_steps == 0 || next.row >= my_groups) {
      b = Share{};
      return;
    }
    RowView rows[2];
    rows_of(next.row, rows);
    if constexpr (kType == WeightType::kQ4_K) {
      b = load_row_pair_block(rows, warp + kWarps * next.step, t);
    } else {
      b = load_q6_row_pair_block(rows, warp + kWarps * next.step, t);
    }
    if (++next.step == my_steps) {
      next.step = 0;
      ++next.row;
    }
  };

  Share current, ahead;
  load_next(current);
  load_next(ahead);
  wait_for_prior_kernels();  // x is theirs (the weights above are not)
  stage_q8k(p, smem);
  float* partials = reinterpret_cast<float*>(smem + p.n_tokens * p.token_bytes);  // 2 x [8][16][8]
  __syncthreads();

  for (int i = 0; i < my_groups; ++i) {
    float acc[4] = {};
    for (int step = 0; step < my_steps; ++step) {
      if constexpr (kType == WeightType::kQ4_K) {
        mma_block(current, warp + kWarps * step, g, t, p, smem, acc);
      } else {
        mma_q6_block(current, warp + kWarps * step, g, t, p, smem, acc);
      }
      current = ahead;
      load_next(ahead);
    }
    // Buffer i % 2: the sync after group i + 1's sums are stored comes after
    // every thread has read group i's, so group i + 2 may reuse it.
    float* partial = partials + (i % 2) * (kWarps * 16 * 8);
#pragma unroll
    for (int k = 0; k < 4; ++k) partial[(warp * 16 + g + 8 * (k / 2)) * 8 + 2 * t + k % 2] = acc[k];
    __syncthreads();
    const int64_t group = blockIdx.x + static_cast<int64_t>(i) * gridDim.x;
    const auto row_sum = [&](int row, int token) {
      float v[8];
#pragma unroll
      for (int w = 0; w < kWarps; ++w) v[w] = partial[(w * 16 + row) * 8 + token];
      return sum_of_eight(v);
    };
    for (int k = static_cast<int>(threadIdx.x); k < outputs_per_group * p.n_tokens; k += kThreads) {
      const int o = k % outputs_per_group, token = k / outputs_per_group;
      const int64_t out = group * outputs_per_group + o;
      if (out >= n_outputs) continue;
      p.y[token * n_outputs + out] =
          swiglu ? silu_times(row_sum(o, token), row_sum(o + 8, token)) : row_sum(o, token);
    }
  }
}

template <WeightType kType>
void launch_typed(const KQuantParams& p, int64_t n_outputs, cudaStream_t stream) {
  const int64_t smem_bytes = int64_t{p.n_tokens} * p.token_bytes + kMmaPartialBytes;
  const int64_t groups = ceil_div(n_outputs, p.swiglu_n > 0 ? 8 : 16);
  launch_over(mma_decode_kernel<kType>, groups, 1, smem_bytes, p, stream);
}

}  // namespace

void launch_mma_decode(const KQuantParams& p, int64_t n_outputs, WeightType type,
                       cudaStream_t stream) {
  if (type == WeightType::kQ6_K) return launch_typed<WeightType::kQ6_K>(p, n_outputs, stream);
  launch_typed<WeightType::kQ4_K>(p, n_outputs, stream);
}

}  // namespace strata::kquant
