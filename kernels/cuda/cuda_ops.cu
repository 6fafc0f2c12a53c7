#include "kernels/cuda/cuda_ops.h"

#include <climits>

#include "common/check.h"
#include "gpu/cuda_check.h"
#include "kernels/cuda/cuda_dependent_launch.cuh"
#include "kernels/cuda/cuda_kquant_decode.h"
#include "kernels/cuda/cuda_q8k_staging.cuh"
#include "kernels/cuda/cuda_qkv_finish.cuh"
#include "kernels/cuda/cuda_swiglu.cuh"
#include "kernels/cuda/cuda_warp_reduce.cuh"

namespace strata {
namespace {

// One block per row. Decode norms few rows, so a row's latency is what
// counts: with 1024 threads a hidden size of 2048-8192 is 2-8 loads per
// thread (256 threads took 9 us for one 2048-float row on an H200).
constexpr int kNormThreads = 1024;

// Sum over the block (kNormThreads threads); every thread gets the total.
__device__ float block_sum(float v) {
  __shared__ float partial[kNormThreads / 32];
  v = warp_sum(v);
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  __syncthreads();  // partial may still be read by a previous call's threads
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < kNormThreads / 32; ++w) total += partial[w];
  return total;
}

// 1 / rms of a row of n from each thread's share of its sum of squares.
__device__ float inverse_rms_of(float sum_squares, int64_t n, float eps) {
  return 1.0f / sqrtf(block_sum(sum_squares) / static_cast<float>(n) + eps);
}

__device__ float inverse_rms(const float* row, int64_t n, float eps) {
  float sum_squares = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += kNormThreads) sum_squares += row[i] * row[i];
  return inverse_rms_of(sum_squares, n, eps);
}

// Where a norm kernel stages its output for the integer decode products
// (null: it does not), staged_bytes apart a row.
struct StagedOut {
  uint8_t* rows;
  int64_t row_bytes;
};

// The block's output row `dst` (n values, just written by its threads)
// staged as the integer decode products would stage it: a warp per 256
// values, the same values, so the same bytes.
__device__ void stage_row(const float* dst, int64_t n, StagedOut staged) {
  if (staged.rows == nullptr) return;
  __syncthreads();  // dst is every thread's
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  uint8_t* at = staged.rows + static_cast<int64_t>(blockIdx.x) * staged.row_bytes;
  for (int block = warp; block < n / kquant::kBlockElems; block += kNormThreads / 32) {
    const float* src = dst + int64_t{kquant::kBlockElems} * block + 8 * lane;
    float v[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = src[i];
    kquant::stage_q8k_block(at, static_cast<int>(n), block, v, lane);
  }
}

// One block per row.
__global__ void rms_norm_kernel(const float* x, const float* weight, float eps, int64_t n,
                                float* out, const int32_t* row_ids, StagedOut staged) {
  let_next_kernel_start();
  wait_for_prior_kernels();  // x is the kernel before's
  const int64_t row = row_ids != nullptr ? row_ids[blockIdx.x] : blockIdx.x;
  const float* in = x + row * n;
  const float inv_rms = inverse_rms(in, n, eps);
  float* dst = out + static_cast<int64_t>(blockIdx.x) * n;
  for (int64_t i = threadIdx.x; i < n; i += kNormThreads) dst[i] = in[i] * inv_rms * weight[i];
  stage_row(dst, n, staged);
}

// Rows up to kCachedPerThread * kNormThreads elements are read once, with
// their weights, into registers: the add, the sum of squares and the scaled
// output then wait on one round trip to memory rather than three (the
// weights' loads go out with the row's). Longer rows' tails are read again.
constexpr int kCachedPerThread = 8;

__global__ void add_rms_norm_kernel(float* x, const float* delta, const float* weight, float eps,
                                    int64_t n, float* out, StagedOut staged) {
  let_next_kernel_start();
  float* row = x + static_cast<int64_t>(blockIdx.x) * n;
  const float* d = delta + static_cast<int64_t>(blockIdx.x) * n;
  float weights[kCachedPerThread];  // no kernel writes them: loaded before the wait
#pragma unroll
  for (int j = 0; j < kCachedPerThread; ++j) {
    const int64_t i = threadIdx.x + int64_t{j} * kNormThreads;
    weights[j] = i < n && weight != nullptr ? weight[i] : 0.0f;
  }
  wait_for_prior_kernels();  // x and delta are earlier kernels'
  float sums[kCachedPerThread];
#pragma unroll
  for (int j = 0; j < kCachedPerThread; ++j) {
    const int64_t i = threadIdx.x + int64_t{j} * kNormThreads;
    sums[j] = i < n ? row[i] + d[i] : 0.0f;
  }
  float sum_squares = 0.0f;
#pragma unroll
  for (int j = 0; j < kCachedPerThread; ++j) {
    const int64_t i = threadIdx.x + int64_t{j} * kNormThreads;
    if (i < n) row[i] = sums[j];
    sum_squares += sums[j] * sums[j];
  }
  // Each thread adds the tail elements it will read back below: no barrier
  // needed between the add and the norm's own reads.
  const int64_t tail = int64_t{kCachedPerThread} * kNormThreads;
  for (int64_t i = tail + threadIdx.x; i < n; i += kNormThreads) {
    row[i] += d[i];
    sum_squares += row[i] * row[i];
  }
  if (weight == nullptr) return;
  const float inv_rms = inverse_rms_of(sum_squares, n, eps);
  float* dst = out + static_cast<int64_t>(blockIdx.x) * n;
#pragma unroll
  for (int j = 0; j < kCachedPerThread; ++j) {
    const int64_t i = threadIdx.x + int64_t{j} * kNormThreads;
    if (i < n) dst[i] = sums[j] * inv_rms * weights[j];
  }
  for (int64_t i = tail + threadIdx.x; i < n; i += kNormThreads) {
    dst[i] = row[i] * inv_rms * weight[i];
  }
  stage_row(dst, n, staged);
}

// One warp per (row, head) over the Q, K and V heads of every row.
__global__ void finish_qkv_kernel(QkvInput in, QkvFinish f, float* q, float* k, float* v,
                                  bool neox, int64_t n_units) {
  let_next_kernel_start();
  wait_for_prior_kernels();  // the projections are the kernel before's
  const int64_t unit = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (unit >= n_units) return;  // whole warps leave together
  const int64_t heads_per_row = f.n_heads + 2 * f.n_kv_heads;
  finish_qkv_head(in, f, neox, unit / heads_per_row, unit % heads_per_row, q, k, v);
}

__global__ void silu_mul_kernel(const float* gate, const float* up, int64_t in_stride, int64_t n,
                                int64_t n_total, float* out) {
  let_next_kernel_start();
  wait_for_prior_kernels();  // gate and up are the kernel before's
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_total) return;
  const int64_t at = i / n * in_stride + i % n;
  out[i] = silu_times(gate[at], up[at]);
}

unsigned int blocks_for(int64_t n, int threads) {
  return static_cast<unsigned int>((n + threads - 1) / threads);
}

StagedOut staged_out(uint8_t* rows, int64_t row_length) {
  if (rows == nullptr) return {nullptr, 0};
  STRATA_CHECK(row_length <= INT_MAX, "rows of ", row_length, " values are too long to stage");
  return {rows, cuda_kquant_staged_x_bytes(row_length)};
}

}  // namespace

void cuda_rms_norm(const float* x, const float* weight, float eps, int64_t n_rows,
                   int64_t row_length, float* out, cudaStream_t stream, const int32_t* row_ids,
                   uint8_t* out_staged) {
  STRATA_CHECK(n_rows >= 0 && row_length > 0);
  if (n_rows == 0) return;
  launch_dependent(rms_norm_kernel, dim3(static_cast<unsigned int>(n_rows)), dim3(kNormThreads), 0,
                   stream, x, weight, eps, row_length, out, row_ids,
                   staged_out(out_staged, row_length));
}

void cuda_add_rms_norm(float* x, const float* delta, const float* weight, float eps, int64_t n_rows,
                       int64_t row_length, float* out, cudaStream_t stream, uint8_t* out_staged) {
  STRATA_CHECK(n_rows >= 0 && row_length > 0);
  STRATA_CHECK(out_staged == nullptr || weight != nullptr, "staging an add without a norm");
  if (n_rows == 0) return;
  launch_dependent(add_rms_norm_kernel, dim3(static_cast<unsigned int>(n_rows)), dim3(kNormThreads),
                   0, stream, x, delta, weight, eps, row_length, out,
                   staged_out(out_staged, row_length));
}

void cuda_finish_qkv(const QkvInput& in, const QkvFinish& f, float* q, float* k, float* v,
                     cudaStream_t stream) {
  STRATA_CHECK(f.n_rows >= 0 && f.n_heads > 0 && f.n_kv_heads > 0 && f.head_dim > 0 &&
               f.head_dim % 2 == 0);
  const int64_t n_units = f.n_rows * (f.n_heads + 2 * f.n_kv_heads);
  if (n_units == 0) return;
  constexpr int kWarpsPerBlock = 4;
  launch_dependent(finish_qkv_kernel, dim3(blocks_for(n_units, kWarpsPerBlock)),
                   dim3(kWarpsPerBlock * 32), 0, stream, in, f, q, k, v,
                   f.style == RopeStyle::kNeox, n_units);
}

void cuda_silu_mul(const float* gate, const float* up, int64_t in_stride, int64_t n_rows,
                   int64_t n, float* out, cudaStream_t stream) {
  STRATA_CHECK(n_rows >= 0 && n > 0 && in_stride >= n);
  const int64_t n_total = n_rows * n;
  if (n_total == 0) return;
  launch_dependent(silu_mul_kernel, dim3(blocks_for(n_total, 256)), dim3(256), 0, stream, gate, up,
                   in_stride, n, n_total, out);
}

}  // namespace strata
