// The element-wise and per-row operations of a layer on the GPU, on f32
// activations in row-major device buffers: each computes what its CPU
// counterpart in kernels/cpu/ops.h computes (same formulas, f32), fused where
// a pass over memory can be saved. All are asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cpu/ops.h"

namespace strata {

// out[i] = rms_norm(x[row_i]) * weight for i < n_rows, rows of row_length
// floats; row_i = row_ids[i] (a device array) or i when row_ids is null (the
// LM head norms only the rows whose logits are wanted). out may be x when
// row_ids is null.
void cuda_rms_norm(const float* x, const float* weight, float eps, int64_t n_rows,
                   int64_t row_length, float* out, cudaStream_t stream,
                   const int32_t* row_ids = nullptr);

// The residual connection and the next sublayer's norm in one pass:
//   x += delta;  out = rms_norm(x) * weight   (only the add if weight is null)
void cuda_add_rms_norm(float* x, const float* delta, const float* weight, float eps,
                       int64_t n_rows, int64_t row_length, float* out, cudaStream_t stream);

// What happens to each token's Q (or K) heads between the projection and
// attention, in place on x [n_rows][n_heads * head_dim]: the bias (qwen2;
// null if none), the per-head RMSNorm (qwen3; null if none), then RoPE at
// positions[row] (a device array) with inv_freqs [head_dim / 2] (device).
void cuda_finish_qk(float* x, int64_t n_rows, int64_t n_heads, int64_t head_dim,
                    const float* bias, const float* head_norm, float eps,
                    const int32_t* positions, const float* inv_freqs, RopeStyle style,
                    cudaStream_t stream);

// x[r][i] += bias[i] for rows of row_length floats.
void cuda_add_bias(float* x, const float* bias, int64_t n_rows, int64_t row_length,
                   cudaStream_t stream);

// gate[i] = silu(gate[i]) * up[i] for i < n.
void cuda_silu_mul(float* gate, const float* up, int64_t n, cudaStream_t stream);

}  // namespace strata
