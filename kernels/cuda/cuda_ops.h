// The element-wise and per-row operations of a layer on the GPU, on f32
// activations in row-major device buffers: each computes what its CPU
// counterpart in kernels/cpu/ops.h computes (same formulas, f32), fused where
// a pass over memory can be saved. All are asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cpu/ops.h"
#include "kernels/cuda/cuda_kv_slots.h"

namespace strata {

// out[i] = rms_norm(x[row_i]) * weight for i < n_rows, rows of row_length
// floats; row_i = row_ids[i] (a device array) or i when row_ids is null (the
// LM head norms only the rows whose logits are wanted). out may be x when
// row_ids is null.
//
// out_staged, if not null: each out row also as the integer decode products
// stage their x (cuda_kquant_staged_x_bytes(row_length) bytes a row;
// row_length a multiple of 256), for the products that read out next
// (their x_staged), so that they need not quantize it in every thread block.
void cuda_rms_norm(const float* x, const float* weight, float eps, int64_t n_rows,
                   int64_t row_length, float* out, cudaStream_t stream,
                   const int32_t* row_ids = nullptr, uint8_t* out_staged = nullptr);

// The residual connection and the next sublayer's norm in one pass:
//   x += delta;  out = rms_norm(x) * weight   (only the add if weight is null)
// out_staged as for cuda_rms_norm (with a weight only).
void cuda_add_rms_norm(float* x, const float* delta, const float* weight, float eps, int64_t n_rows,
                       int64_t row_length, float* out, cudaStream_t stream,
                       uint8_t* out_staged = nullptr);

// Where a step's Q, K and V projections are: one fused [n_rows][q|k|v]
// matrix (all three strides its width, k and v pointing inside it), or three
// compact arrays. Strides are in floats.
struct QkvInput {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t q_stride = 0;
  int64_t k_stride = 0;
  int64_t v_stride = 0;
};

// What happens to each token's Q, K and V heads between the projection and
// attention, in one launch: the biases (qwen2; null if none), the per-head
// RMSNorm of Q and K (qwen3; null if none), RoPE of Q and K at
// positions[row] (device) with inv_freqs [head_dim / 2] (device). Writes
// compact q [n_rows][n_heads * head_dim], k and v [n_rows][n_kv_heads *
// head_dim]; an output may be its own input (compact, in place). With
// kv_out (cuda_kv_slots), the finished K and V rows also go into the KV
// arena, as cuda_write_kv would write them: one launch fewer a layer.
struct QkvFinish {
  int64_t n_rows = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  const float* bq = nullptr;
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* q_norm = nullptr;
  const float* k_norm = nullptr;
  float eps = 0;
  const int32_t* positions = nullptr;
  const float* inv_freqs = nullptr;
  RopeStyle style = RopeStyle::kNormal;
  KvSlots kv_out;  // kv_out.kv null: K and V go to k and v only
};
void cuda_finish_qkv(const QkvInput& in, const QkvFinish& f, float* q, float* k, float* v,
                     cudaStream_t stream);

// out[r][i] = silu(gate[r * in_stride + i]) * up[r * in_stride + i] for
// i < n, out compact [n_rows][n] (may be gate when in_stride is n).
void cuda_silu_mul(const float* gate, const float* up, int64_t in_stride, int64_t n_rows,
                   int64_t n, float* out, cudaStream_t stream);

}  // namespace strata
