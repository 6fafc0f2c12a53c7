// vec_dot_kernel(): picks a kernel from the set of the requested SIMD path.
#include "kernels/cpu/vec_dot.h"

#include "common/check.h"
#include "kernels/cpu/vec_dot_kernels.h"

namespace strata {
namespace {

const VecDotKernelSet& kernel_set(CpuSimd simd) {
  STRATA_CHECK(cpu_supports(simd), "this CPU or build cannot run the ", cpu_simd_name(simd),
               " kernels");
  switch (simd) {
    case CpuSimd::kScalar: return vec_dot_kernels_scalar();
#if defined(__x86_64__) || defined(__i386__)
    case CpuSimd::kAvx2: return vec_dot_kernels_avx2();
#else
    case CpuSimd::kAvx2: break;
#endif
  }
  STRATA_CHECK(false, "no kernels for ", cpu_simd_name(simd));
  return vec_dot_kernels_scalar();
}

}  // namespace

VecDotFn vec_dot_kernel(WeightType type, CpuSimd simd) {
  const VecDotKernelSet& kernels = kernel_set(simd);
  switch (type) {
    case WeightType::kF32: return kernels.f32;
    case WeightType::kF16: return kernels.f16;
    case WeightType::kBF16: return kernels.bf16;
    case WeightType::kQ8_0: return kernels.q8_0;
    case WeightType::kQ4_0: return kernels.q4_0;
    case WeightType::kQ4_K: return kernels.q4_k;
    case WeightType::kQ5_K: return kernels.q5_k;
    case WeightType::kQ6_K: return kernels.q6_k;
    default: break;
  }
  STRATA_CHECK(false, "no CPU dot product for weight type ", weight_type_name(type));
  return nullptr;
}

}  // namespace strata
