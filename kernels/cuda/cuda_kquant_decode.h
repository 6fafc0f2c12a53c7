// Decode products of Q4_K and Q6_K matrices on integer dot products, the
// way the CPU computes them (kernels/cpu/vec_dot.h): x quantized to Q8_K
// blocks (256 values, an f32 scale, 8-bit quants, as
// quantize_activations_q8_k), each sub-block's quants dotted with x's 8-bit
// quants four at a time (dp4a) or on integer tensor cores, and the block's
// scales (and Q4_K's minimums, Q6_K's offset of 32) applied to those
// integer sums.
//
//   y[t * n_rows + r] = dot(row r of w, x[t * row_length, + row_length))
//
// Why not the tensor-core path (cuda_quant_mma.h): at decode the weights are
// read once and used for one to eight tokens, so the product is bound by the
// instructions that turn weights into something to multiply. Turning Q4_K
// nibbles into f16 takes about three instructions a pair; a dp4a takes four
// nibbles as they are (one mask or shift and mask for the four; Q6_K's two
// top bits one more shift, mask and or).
//
// Each weight is read from VRAM once per call for all the tokens: one token
// by dp4a, two to eight on tensor cores (integer mma), which add the same
// integer sums and f32 terms in the same order. A token's result does not
// depend on the other tokens of the call (x is quantized a token at a time,
// and every row's sum runs in an order fixed by the matrix alone), so a
// sequence decodes with the same bits alone or batched.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/cuda_weights.h"

namespace strata {

inline constexpr int64_t kMaxKQuantDecodeTokens = 8;

// Whether cuda_kquant_decode takes this matrix and token count: Q4_K or
// Q6_K, 1 ..
// kMaxKQuantDecodeTokens tokens, a row whose staged x fits a block's shared
// memory on the current device.
bool cuda_kquant_decode_supports(const CudaWeightMatrix& w, int64_t n_tokens);

// Bytes of one token's x quantized as these kernels stage it (its Q8_K
// quants, sums and scales, in their layout). cuda_rms_norm and
// cuda_add_rms_norm write it alongside their output when asked: then every
// product reading that x copies these bytes rather than quantizing x again
// in each of its thread blocks. row_length a multiple of 256.
int64_t cuda_kquant_staged_x_bytes(int64_t row_length);

// Whether the product runs quicker on x staged before it (by the norm, or a
// launch of its own: cuda_kquant_stage_x) than quantizing x in each of its
// thread blocks: above 4,096 values of x (tokens x row length). Measured on
// 8B Q4_K, H200: at one token the 4,096-wide products lose 2% of batch-1
// speed staged by the norm, while the 14,336-wide down product gains 2.5%
// staged by its own launch; at 8 sequences all four staged gain 70% of the
// steady decode rate (every thread block of the 2-8-token kernel would
// quantize all tokens' x).
bool cuda_kquant_decode_wants_staged_x(const CudaWeightMatrix& w, int64_t n_tokens);

// x (n_tokens rows of row_length floats, a multiple of 256) staged as these
// products read it, n_tokens x cuda_kquant_staged_x_bytes(row_length) bytes,
// in one launch of a warp per 256 values: for products no norm precedes.
void cuda_kquant_stage_x(const float* x, int64_t n_tokens, int64_t row_length, uint8_t* staged,
                         cudaStream_t stream);

// Enqueues the product on `stream`; x and y are device f32 arrays that do not
// overlap. Requires cuda_kquant_decode_supports(w, n_tokens). x_staged, if
// not null: x as staged (n_tokens x cuda_kquant_staged_x_bytes(row_length)
// bytes), read instead of x.
void cuda_kquant_decode(const CudaWeightMatrix& w, const float* x, int64_t n_tokens, float* y,
                        cudaStream_t stream, const uint8_t* x_staged = nullptr);

// SwiGLU straight from a stacked [gate | up] matrix (n_rows even: n =
// n_rows / 2 gate rows, then the n up rows): out[t * n + i] = silu(gate_i .
// x_t) * (up_i . x_t), in one kernel, with the bits of cuda_kquant_decode
// into [n_tokens][2n] followed by cuda_silu_mul.
bool cuda_kquant_decode_swiglu_supports(const CudaWeightMatrix& w_gate_up, int64_t n_tokens);
void cuda_kquant_decode_swiglu(const CudaWeightMatrix& w_gate_up, const float* x, int64_t n_tokens,
                               float* out, cudaStream_t stream, const uint8_t* x_staged = nullptr);

}  // namespace strata
