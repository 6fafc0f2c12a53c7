// Programmatic dependent launch (sm_90+). A kernel started by
// launch_dependent() may begin while the kernel before it in the stream is
// still running, so that its launch and prologue — in a decode step, the
// matmul's first weight loads, a norm's weights, attention's work lookup,
// none of which an earlier kernel writes — overlap that kernel's tail
// instead of following it.
//
// The rules for such a kernel: every block calls wait_for_prior_kernels()
// before it reads anything an earlier kernel wrote, before it writes
// anything, and before it exits (the wait returns once the kernel before
// has finished and its writes are visible; a block that left without it
// could let the kernel after this one pass its own wait while an earlier
// one still runs). A kernel calls let_next_kernel_start() to let the next
// one launch before it ends; without it that happens when it ends. All of
// it degrades to plain stream order before sm_90.
#pragma once

#include <cuda_runtime.h>  // cudaLaunchKernelEx's C++ form

#include <utility>

#include "gpu/cuda_check.h"
#include "gpu/cuda_device.h"

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

// As launch_dependent, with the blocks in clusters of `cluster` (sm_90
// only; 1 x 1 x 1: no clusters).
template <typename... Params, typename... Args>
void launch_dependent_cluster(void (*kernel)(Params...), dim3 grid, dim3 block, dim3 cluster,
                              size_t smem_bytes, cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attrs[2]{};
  unsigned n_attrs = 0;
  if (stream != nullptr && cuda_dependent_launch_supported()) {
    attrs[n_attrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[n_attrs++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster.x * cluster.y * cluster.z > 1) {
    attrs[n_attrs].id = cudaLaunchAttributeClusterDimension;
    attrs[n_attrs].val.clusterDim.x = cluster.x;
    attrs[n_attrs].val.clusterDim.y = cluster.y;
    attrs[n_attrs++].val.clusterDim.z = cluster.z;
  }
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem_bytes;
  config.stream = stream;
  config.attrs = attrs;
  config.numAttrs = n_attrs;
  STRATA_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

// kernel<<<grid, block, smem_bytes, stream>>>(args...), as a dependent
// launch where the device has them (and the stream is not the legacy
// default stream, which the tests use). The kernel must follow the rules
// above.
template <typename... Params, typename... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem_bytes,
                      cudaStream_t stream, Args&&... args) {
  launch_dependent_cluster(kernel, grid, block, dim3(1, 1, 1), smem_bytes, stream,
                           std::forward<Args>(args)...);
}

}  // namespace strata
