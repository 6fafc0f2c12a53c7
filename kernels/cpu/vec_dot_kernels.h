// The per-path kernel sets behind vec_dot_kernel() (kernels/cpu/vec_dot.h).
// Internal to kernels/cpu: callers go through vec_dot_kernel, which checks
// that the CPU can run the path. Each function has the VecDotFn contract.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata {

// One set of dot products, one per supported weight type.
struct VecDotKernelSet {
  using Fn = float (*)(int64_t n, const std::byte* weight_row, const std::byte* activations);
  Fn f32;   // f32 weights . f32 activations
  Fn f16;   // f16 weights . f32 activations
  Fn bf16;  // bf16 weights . f32 activations
  Fn q8_0;  // Q8_0 weights . Q8_0 activations
  Fn q4_0;  // Q4_0 weights . Q8_0 activations
  Fn q4_k;  // Q4_K weights . Q8_K activations
  Fn q5_k;  // Q5_K weights . Q8_K activations
  Fn q6_k;  // Q6_K weights . Q8_K activations
};

// Portable reference kernels (vec_dot_scalar.cpp).
const VecDotKernelSet& vec_dot_kernels_scalar();

#if defined(__x86_64__) || defined(__i386__)
// AVX2 + FMA + F16C kernels (vec_dot_avx2.cpp, the only file compiled with
// those instructions). Call only when cpu_supports(CpuSimd::kAvx2).
const VecDotKernelSet& vec_dot_kernels_avx2();
#endif

}  // namespace strata
