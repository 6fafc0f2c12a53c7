// probe_gpus for builds without the CUDA backend (-DSTRATA_CUDA=OFF or no nvcc).
#include "gpu/gpu_devices.h"

namespace strata {

GpuProbe probe_gpus() {
  GpuProbe probe;
  probe.unavailable_reason = "built without CUDA (configure with -DSTRATA_CUDA=ON)";
  return probe;
}

}  // namespace strata
