// Dot products of one weight row, read in its GGUF format, with one row of
// activations in the format activation_format(type) names
// (kernels/cpu/activation_quant.h): the inner loop of matmul().
//
// Every weight type has a scalar reference kernel and an AVX2 + FMA + F16C
// kernel; both do the same integer arithmetic, and differ only in the order
// the per-block float terms are summed. Pure functions, any thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/cpu_features.h"
#include "kernels/weight_type.h"

namespace strata {

// Returns sum over i < n of weight[i] * activation[i].
//   n: elements; a multiple of the weight type's block size (any n for
//      F32 / F16 / BF16)
//   weight_row: weight_bytes(type, n) bytes as GGUF stores them, any address
//   activations: n elements in activation_format(type): f32 (4-byte aligned),
//      BlockQ8_0 (any address) or BlockQ8K (4-byte aligned)
using VecDotFn = float (*)(int64_t n, const std::byte* weight_row, const std::byte* activations);

// The kernel for `type` on the `simd` path. Aborts when the type has no CPU
// kernel (weight_type_info(type).supported is false) or the CPU cannot run
// `simd` (cpu_supports). Cheap (a switch): call it once per matmul.
VecDotFn vec_dot_kernel(WeightType type, CpuSimd simd);

}  // namespace strata
