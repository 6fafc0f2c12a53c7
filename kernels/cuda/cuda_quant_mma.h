// Matrix products of up to kMaxMmaTokens tokens on tensor cores, straight
// from the weights' blocks: decode steps, alone or batched.
//
//   y[t * n_rows + r] = dot(row r of w, x[t * row_length, + row_length))
//
// Each weight is read from VRAM once per call for all the tokens, dequantized
// in registers to f16 and fed to mma.sync (f32 accumulation); x is rounded to
// f16. A token's result does not depend on the other tokens of the call (the
// summation order is fixed by the matrix alone), so a sequence decodes the
// same alone or batched.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/cuda_weights.h"

namespace strata {

inline constexpr int64_t kMaxMmaTokens = 64;

// Whether cuda_mma_matmul takes this matrix and token count: F16 and the
// block types (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K), 1 .. kMaxMmaTokens tokens.
bool cuda_mma_supports(const CudaWeightMatrix& w, int64_t n_tokens);

// Device floats of scratch cuda_mma_matmul needs for this product (partial
// sums when the rows are split among blocks; 0 for up to 8 tokens).
int64_t cuda_mma_scratch_floats(const CudaWeightMatrix& w, int64_t n_tokens);

// Whether a product of up to 8 tokens runs in blocks that stay resident and
// walk several row blocks each (rows that fit one staged x tile, more row
// blocks than fit the GPU at once): the same bits as the one-row-block
// blocks it replaces. Exposed for tests.
bool cuda_mma_walks_resident(const CudaWeightMatrix& w, int64_t n_tokens);

// Whether a product of up to 8 tokens (or its fused SwiGLU) runs each row
// block in a cluster of two blocks that split the row (sm_90; matrices of at
// most one row block a multiprocessor), each block's warp sums added in
// block 0 in a fixed order. Exposed for tests.
bool cuda_mma_pairs_blocks(const CudaWeightMatrix& w, int64_t n_tokens);

// Enqueues the product on `stream`; x and y are device f32 arrays that do not
// overlap, scratch holds cuda_mma_scratch_floats(w, n_tokens) floats (may be
// null when that is 0). Requires cuda_mma_supports(w, n_tokens).
void cuda_mma_matmul(const CudaWeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                     float* scratch, cudaStream_t stream);

// SwiGLU straight from a stacked [gate | up] matrix (n_rows even: n =
// n_rows / 2 gate rows, then the n up rows) for up to kMaxMmaSwigluTokens
// tokens: out[t * n + i] = silu(gate_i . x_t) * (up_i . x_t), in one
// kernel. The same bits as cuda_mma_matmul into [n_tokens][2n] followed by
// cuda_silu_mul: a block takes 8 gate rows and their 8 up rows instead of
// 16 neighbours, and each row's sum does not depend on its neighbours.
inline constexpr int64_t kMaxMmaSwigluTokens = 8;
bool cuda_mma_swiglu_supports(const CudaWeightMatrix& w_gate_up, int64_t n_tokens);
void cuda_mma_swiglu(const CudaWeightMatrix& w_gate_up, const float* x, int64_t n_tokens,
                     float* out, cudaStream_t stream);

}  // namespace strata
