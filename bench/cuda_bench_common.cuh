// What the GPU benchmarks share: event timing, and the release/acquire
// accesses their blocks wait on each other with. Included by .cu files only.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cuda/cuda_check.h"

namespace strata::bench {

// The median of `repeats` timings of `body` on `stream` (after a warm-up),
// in microseconds.
template <typename Body>
double median_us(cudaStream_t stream, int repeats, Body body) {
  cudaEvent_t start, stop;
  STRATA_CUDA_CHECK(cudaEventCreate(&start));
  STRATA_CUDA_CHECK(cudaEventCreate(&stop));
  body();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    STRATA_CUDA_CHECK(cudaEventRecord(start, stream));
    body();
    STRATA_CUDA_CHECK(cudaEventRecord(stop, stream));
    STRATA_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    STRATA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms * 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::nth_element(times.begin(), times.begin() + repeats / 2, times.end());
  return times[static_cast<size_t>(repeats / 2)];
}

__device__ __forceinline__ uint32_t load_acquire(const uint32_t* at) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(at) : "memory");
  return v;
}

__device__ __forceinline__ void add_release(uint32_t* at, uint32_t v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;\n" ::"l"(at), "r"(v) : "memory");
}

}  // namespace strata::bench
