// Per-type encoders and decoders on typed blocks: the functions behind
// quantize() / dequantize() (kernels/cpu/quantize.h). For a run of n blocks
// the float side holds n * elements-per-block values.
// Pure functions, any thread. Inputs to the encoders must be finite.
#pragma once

#include <span>

#include "kernels/cpu/quant_blocks.h"

namespace strata {

// Byte-identical to ggml's quantize_row_q8_0_ref / quantize_row_q4_0_ref.
void quantize_q8_0(std::span<const float> values, std::span<BlockQ8_0> blocks);
void quantize_q4_0(std::span<const float> values, std::span<BlockQ4_0> blocks);

// K-quants: searched scales in the manner of ggml's reference quantizers
// (weighted affine fit for Q4_K / Q5_K, weighted symmetric fit for Q6_K).
void quantize_q4_k(std::span<const float> values, std::span<BlockQ4K> blocks);
void quantize_q5_k(std::span<const float> values, std::span<BlockQ5K> blocks);
void quantize_q6_k(std::span<const float> values, std::span<BlockQ6K> blocks);

// Same arithmetic (and so the same floats) as ggml's dequantize_row_*.
void dequantize_q8_0(std::span<const BlockQ8_0> blocks, std::span<float> out);
void dequantize_q4_0(std::span<const BlockQ4_0> blocks, std::span<float> out);
void dequantize_q4_k(std::span<const BlockQ4K> blocks, std::span<float> out);
void dequantize_q5_k(std::span<const BlockQ5K> blocks, std::span<float> out);
void dequantize_q6_k(std::span<const BlockQ6K> blocks, std::span<float> out);

}  // namespace strata
