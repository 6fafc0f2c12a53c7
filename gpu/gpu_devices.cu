#include <cuda_runtime.h>

#include "common/str_cat.h"
#include "gpu/gpu_devices.h"

namespace strata {
namespace {

// Writes a known value: proves this binary holds code the device can run.
__global__ void probe_kernel(int* out) { *out = 0x5742; }

bool runs_probe_kernel(int device, std::string& error) {
  if (cudaSetDevice(device) != cudaSuccess) return false;
  int* value = nullptr;
  if (cudaMalloc(&value, sizeof(int)) != cudaSuccess) return false;
  probe_kernel<<<1, 1>>>(value);
  int host = 0;
  cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess) status = cudaMemcpy(&host, value, sizeof host, cudaMemcpyDeviceToHost);
  cudaFree(value);
  if (status != cudaSuccess) {
    error = str_cat("device ", device, ": ", cudaGetErrorString(status));
    return false;
  }
  return host == 0x5742;
}

}  // namespace

GpuProbe probe_gpus() {
  GpuProbe probe;
  probe.cuda_built = true;
  cudaDriverGetVersion(&probe.driver_version);
  cudaRuntimeGetVersion(&probe.runtime_version);
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    probe.unavailable_reason = str_cat("no usable CUDA driver or device (", cudaGetErrorString(status), ")");
    cudaGetLastError();  // clear the sticky error
    return probe;
  }
  std::string error;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    if (!runs_probe_kernel(i, error)) continue;
    probe.devices.push_back({.index = i, .name = prop.name, .compute_major = prop.major,
                             .compute_minor = prop.minor, .memory_bytes = prop.totalGlobalMem,
                             .multiprocessors = prop.multiProcessorCount});
  }
  if (probe.devices.empty()) {
    probe.unavailable_reason =
        count == 0 ? "the driver reports no CUDA devices"
                   : str_cat("no device runs this build's kernels", error.empty() ? "" : ": ", error);
  }
  return probe;
}

}  // namespace strata
