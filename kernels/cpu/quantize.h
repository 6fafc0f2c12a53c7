// Quantize and dequantize runs of weights in ggml's block layouts
// (kernels/cpu/quant_blocks.h), the bytes a GGUF file holds for a tensor.
// Pure functions, any thread. Supported: F32, F16, BF16, Q8_0, Q4_0, Q4_K,
// Q5_K, Q6_K (weight_type_info(type).supported); any other type, or sizes that
// do not match, is a bug and aborts (STRATA_CHECK).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "kernels/weight_type.h"

namespace strata {

// Encodes `values` (finite; a whole number of the type's blocks) as `type`:
// returns weight_bytes(type, values.size()) bytes. Q8_0 and Q4_0 are byte-
// identical to ggml's reference quantizers; the K types use searched scales
// (kernels/cpu/quantize_k.cpp).
std::vector<std::byte> quantize(WeightType type, std::span<const float> values);

// Decodes weight_bytes(type, out.size()) bytes of `type` into `out`
// (out.size() elements). `bytes` may start at any address.
void dequantize(WeightType type, std::span<const std::byte> bytes, std::span<float> out);

}  // namespace strata
