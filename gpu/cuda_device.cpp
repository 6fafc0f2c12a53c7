#include "gpu/cuda_device.h"

#include <cuda_runtime_api.h>

#include "gpu/cuda_check.h"

namespace strata {

int cuda_multiprocessor_count() {
  int device = 0, count = 0;
  STRATA_CUDA_CHECK(cudaGetDevice(&device));
  STRATA_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

int cuda_max_shared_memory_per_block() {
  int device = 0, bytes = 0;
  STRATA_CUDA_CHECK(cudaGetDevice(&device));
  STRATA_CUDA_CHECK(
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return bytes;
}

bool cuda_dependent_launch_supported() {
  int device = 0, major = 0;
  STRATA_CUDA_CHECK(cudaGetDevice(&device));
  STRATA_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9;
}

}  // namespace strata
