// Matrix products with weights in VRAM, straight from their quantized blocks.
//
//   y[t * n_rows + r] = dot(row r of w, x[t * row_length, + row_length))
//
// for every token t < n_tokens; x and y are device f32 arrays. Four paths:
// - decode batches of Q4_K (up to kMaxKQuantDecodeTokens): cuda_kquant_decode.h,
//   integer dot products of the 4-bit quants with x quantized to 8 bits, as
//   the CPU computes them;
// - other decode batches of F16 (up to kMaxVectorTokens) and block types (up
//   to kMaxMmaTokens): cuda_quant_mma.h, weights read once for all the tokens,
//   dequantized in registers, multiplied on tensor cores;
// - few tokens of F32 and BF16 (and F16 rows that are not whole 16-byte
//   units): a matrix-vector kernel in f32, the same way;
// - many tokens (prefill): tensor cores through cuBLAS (F16 / BF16 weights
//   directly; quantized weights dequantized to f16 tiles first).
//
// Threads: one CudaMatmul per stream; not thread-safe.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpu/device_buffer.h"
#include "kernels/cuda/cuda_weights.h"

namespace strata {

class CudaMatmul {
 public:
  // Token counts up to this stay off cuBLAS.
  static constexpr int64_t kMaxVectorTokens = 8;

  explicit CudaMatmul(cudaStream_t stream);
  ~CudaMatmul();
  CudaMatmul(const CudaMatmul&) = delete;
  CudaMatmul& operator=(const CudaMatmul&) = delete;

  // Enqueues the product on the stream (asynchronous). x and y must not
  // overlap; n_tokens >= 1. x_staged: x as cuda_kquant_decode stages it
  // (cuda_kquant_staged_x_bytes), or null; read in its place where the
  // integer decode kernels take the product.
  void run(const CudaWeightMatrix& w, const float* x, int64_t n_tokens, float* y,
           const uint8_t* x_staged = nullptr);

  // Whether run_swiglu takes this stacked [gate | up] matrix and token count
  // (decode batches on the tensor-core path); otherwise run it, then
  // cuda_silu_mul.
  bool fuses_swiglu(const CudaWeightMatrix& w_gate_up, int64_t n_tokens) const;
  // out[t * n + i] = silu(gate_i . x_t) * (up_i . x_t), n = w_gate_up.n_rows()
  // / 2, in one kernel: the same bits as run() then cuda_silu_mul.
  void run_swiglu(const CudaWeightMatrix& w_gate_up, const float* x, int64_t n_tokens, float* out,
                  const uint8_t* x_staged = nullptr);

 private:
  cudaStream_t stream_;
  void* cublas_ = nullptr;    // cublasHandle_t
  DeviceBuffer half_weights_;  // dequantized weights for the cuBLAS path
  DeviceBuffer half_inputs_;   // x converted to f16 / bf16 for the cuBLAS path
  DeviceBuffer mma_scratch_;   // the tensor-core kernel's split sums
};

// out[i * row_length, + row_length) = row rows[i] of w as f32, for i < n_rows;
// rows is a device array of n_rows indices in [0, w.n_rows()). The embedding
// lookup. Asynchronous on `stream`.
void cuda_gather_rows(const CudaWeightMatrix& w, const int32_t* rows, int64_t n_rows,
                      float* out, cudaStream_t stream);

}  // namespace strata
