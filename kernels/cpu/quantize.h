// Quantize and dequantize rows of weights in ggml's block layouts.
// Pure functions: no state, no allocation beyond the returned buffers.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "kernels/weight_type.h"

namespace strata {

// Encodes `values` (a multiple of the type's block size) as `type`.
// Requires weight_type_info(type).supported.
std::vector<std::byte> quantize(WeightType type, std::span<const float> values);

// Decodes weight_bytes(type, out.size()) bytes of `type` into `out`.
void dequantize(WeightType type, std::span<const std::byte> bytes, std::span<float> out);

}  // namespace strata
