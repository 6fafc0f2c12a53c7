#include "kernels/cuda/cuda_ops.h"

#include "common/check.h"
#include "kernels/cuda/cuda_check.h"

namespace strata {
namespace {

// One block per row. Decode norms few rows, so a row's latency is what
// counts: with 1024 threads a hidden size of 2048-8192 is 2-8 loads per
// thread (256 threads took 9 us for one 2048-float row on an H200).
constexpr int kNormThreads = 1024;

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

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

__device__ float inverse_rms(const float* row, int64_t n, float eps) {
  float sum_squares = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += kNormThreads) sum_squares += row[i] * row[i];
  sum_squares = block_sum(sum_squares);
  return 1.0f / sqrtf(sum_squares / static_cast<float>(n) + eps);
}

// One block per row.
__global__ void rms_norm_kernel(const float* x, const float* weight, float eps, int64_t n,
                                float* out, const int32_t* row_ids) {
  const int64_t row = row_ids != nullptr ? row_ids[blockIdx.x] : blockIdx.x;
  const float* in = x + row * n;
  const float inv_rms = inverse_rms(in, n, eps);
  float* dst = out + static_cast<int64_t>(blockIdx.x) * n;
  for (int64_t i = threadIdx.x; i < n; i += kNormThreads) dst[i] = in[i] * inv_rms * weight[i];
}

__global__ void add_rms_norm_kernel(float* x, const float* delta, const float* weight, float eps,
                                    int64_t n, float* out) {
  float* row = x + static_cast<int64_t>(blockIdx.x) * n;
  const float* d = delta + static_cast<int64_t>(blockIdx.x) * n;
  // Each thread adds the elements it will read back below: no barrier needed
  // between the add and the norm's own reads.
  for (int64_t i = threadIdx.x; i < n; i += kNormThreads) row[i] += d[i];
  if (weight == nullptr) return;
  const float inv_rms = inverse_rms(row, n, eps);
  float* dst = out + static_cast<int64_t>(blockIdx.x) * n;
  for (int64_t i = threadIdx.x; i < n; i += kNormThreads) dst[i] = row[i] * inv_rms * weight[i];
}

// One warp per (row, head): bias, per-head norm, then RoPE of the head's pairs.
__global__ void finish_qk_kernel(float* x, int64_t n_heads, int64_t head_dim, const float* bias,
                                 const float* head_norm, float eps, const int32_t* positions,
                                 const float* inv_freqs, bool neox, int64_t n_units) {
  const int64_t unit = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (unit >= n_units) return;  // whole warps leave together
  const int lane = threadIdx.x % 32;
  const int64_t row = unit / n_heads;
  const int64_t head = unit % n_heads;
  float* h = x + row * n_heads * head_dim + head * head_dim;
  if (bias != nullptr) {
    for (int64_t i = lane; i < head_dim; i += 32) h[i] += bias[head * head_dim + i];
  }
  if (head_norm != nullptr) {
    float sum_squares = 0.0f;
    for (int64_t i = lane; i < head_dim; i += 32) sum_squares += h[i] * h[i];
    const float inv_rms = 1.0f / sqrtf(warp_sum(sum_squares) / static_cast<float>(head_dim) + eps);
    for (int64_t i = lane; i < head_dim; i += 32) h[i] = h[i] * inv_rms * head_norm[i];
  }
  __syncwarp();
  const int64_t n_pairs = head_dim / 2;
  const float pos = static_cast<float>(positions[row]);
  for (int64_t i = lane; i < n_pairs; i += 32) {
    const int64_t first = neox ? i : 2 * i;
    const int64_t second = neox ? i + n_pairs : 2 * i + 1;
    const float angle = pos * inv_freqs[i];
    const float c = cosf(angle);
    const float s = sinf(angle);
    const float a = h[first];
    const float b = h[second];
    h[first] = a * c - b * s;
    h[second] = a * s + b * c;
  }
}

__global__ void add_bias_kernel(float* x, const float* bias, int64_t row_length, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] += bias[i % row_length];
}

__global__ void silu_mul_kernel(float* gate, const float* up, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float g = gate[i];
  gate[i] = g / (1.0f + expf(-g)) * up[i];
}

unsigned int blocks_for(int64_t n, int threads) {
  return static_cast<unsigned int>((n + threads - 1) / threads);
}

}  // namespace

void cuda_rms_norm(const float* x, const float* weight, float eps, int64_t n_rows,
                   int64_t row_length, float* out, cudaStream_t stream, const int32_t* row_ids) {
  STRATA_CHECK(n_rows >= 0 && row_length > 0);
  if (n_rows == 0) return;
  rms_norm_kernel<<<static_cast<unsigned int>(n_rows), kNormThreads, 0, stream>>>(
      x, weight, eps, row_length, out, row_ids);
  STRATA_CUDA_CHECK_LAUNCH();
}

void cuda_add_rms_norm(float* x, const float* delta, const float* weight, float eps,
                       int64_t n_rows, int64_t row_length, float* out, cudaStream_t stream) {
  STRATA_CHECK(n_rows >= 0 && row_length > 0);
  if (n_rows == 0) return;
  add_rms_norm_kernel<<<static_cast<unsigned int>(n_rows), kNormThreads, 0, stream>>>(
      x, delta, weight, eps, row_length, out);
  STRATA_CUDA_CHECK_LAUNCH();
}

void cuda_finish_qk(float* x, int64_t n_rows, int64_t n_heads, int64_t head_dim,
                    const float* bias, const float* head_norm, float eps,
                    const int32_t* positions, const float* inv_freqs, RopeStyle style,
                    cudaStream_t stream) {
  STRATA_CHECK(n_rows >= 0 && n_heads > 0 && head_dim > 0 && head_dim % 2 == 0);
  const int64_t n_units = n_rows * n_heads;
  if (n_units == 0) return;
  constexpr int kWarpsPerBlock = 4;
  finish_qk_kernel<<<blocks_for(n_units, kWarpsPerBlock), kWarpsPerBlock * 32, 0, stream>>>(
      x, n_heads, head_dim, bias, head_norm, eps, positions, inv_freqs,
      style == RopeStyle::kNeox, n_units);
  STRATA_CUDA_CHECK_LAUNCH();
}

void cuda_add_bias(float* x, const float* bias, int64_t n_rows, int64_t row_length,
                   cudaStream_t stream) {
  const int64_t n = n_rows * row_length;
  if (n == 0) return;
  add_bias_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(x, bias, row_length, n);
  STRATA_CUDA_CHECK_LAUNCH();
}

void cuda_silu_mul(float* gate, const float* up, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  silu_mul_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(gate, up, n);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata
