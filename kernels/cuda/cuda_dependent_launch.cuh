// Programmatic dependent launch (sm_90+). A kernel launched with the
// programmatic-serialization attribute may start while the kernel before it
// in the stream is still running, so that its prologue — in a decode step,
// issuing its first weight loads, which nothing before it writes — overlaps
// that kernel's tail instead of following it. Such a kernel must call
// wait_for_prior_kernels() before it reads anything an earlier kernel wrote
// (the wait returns once those kernels have finished and their writes are
// visible). A kernel calls let_next_kernel_start() to let the next one
// launch before it ends; without the call that happens when it ends. Both are
// no-ops before sm_90 (and where the launch had no attribute).
#pragma once

namespace strata {

__device__ __forceinline__ void wait_for_prior_kernels() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void let_next_kernel_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" :::);
#endif
}

}  // namespace strata
