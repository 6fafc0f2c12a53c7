// Activations (the f32 input rows of a matmul) converted to the 8-bit block
// format the weight type's integer dot product wants, as ggml does:
//   Q8_0 / Q4_0 weights  -> Q8_0 blocks (32 elements, fp16 scale)
//   Q4_K / Q5_K / Q6_K   -> Q8_K blocks (256 elements, f32 scale, 16-element sums)
//   F32 / F16 / BF16     -> no conversion: dotted with the f32 row directly.
// The conversion is the same on every SIMD path, so scalar and SIMD kernels
// see identical activations. Pure functions, any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/cpu/quant_blocks.h"
#include "kernels/weight_type.h"

namespace strata {

// ggml's block_q8_K: x[i] ~= d * qs[i], and bsums[g] = sum of qs[16g .. 16g+15]
// (the K-quant kernels use the sums to apply the per-sub-block minimum or
// offset without touching the quants again). Never stored in files, so not
// packed: 292 bytes, 4-byte aligned.
struct BlockQ8K {
  float d;                                      // scale
  int8_t qs[kBlockElemsK];                      // (256) quants, -127..127
  int16_t bsums[kBlockElemsK / 16];             // (16) sums of 16 quants each
};
static_assert(sizeof(BlockQ8K) == 292);

enum class ActivationFormat {
  kF32,   // the f32 row as given
  kQ8_0,  // BlockQ8_0 per 32 elements
  kQ8_K,  // BlockQ8K per 256 elements
};

// The activation format the dot product of `weight_type` takes; the type must
// be supported (weight_type_info(type).supported), else aborts.
ActivationFormat activation_format(WeightType weight_type);

// Elements per block of `format` (1 for kF32): a row's length must be a multiple.
int64_t activation_block_elems(ActivationFormat format);
// Bytes of one row of `row_length` elements in `format`.
size_t activation_row_bytes(ActivationFormat format, int64_t row_length);

// Q8_0 blocks byte-identical to quantize_q8_0 (ggml's quantize_row_q8_0_ref),
// written to vectorize: this runs for every token of every matmul.
// values.size() == 32 * blocks.size(); values finite.
void quantize_activations_q8_0(std::span<const float> values, std::span<BlockQ8_0> blocks);

// Q8_K blocks exactly as ggml's quantize_row_q8_K_ref: the element of largest
// magnitude maps to -127 (so quants stay in -127..127), rounding half to even.
// values.size() == 256 * blocks.size(); values finite.
void quantize_activations_q8_k(std::span<const float> values, std::span<BlockQ8K> blocks);

// One row of `format` (not kF32): x.size() elements into
// activation_row_bytes(format, x.size()) bytes at `out` (4-byte aligned).
void quantize_activation_row(ActivationFormat format, std::span<const float> x,
                             std::span<std::byte> out);

}  // namespace strata
