// measure_gpu_ceilings in builds without the CUDA backend.
#include "kernels/gpu_ceilings.h"

namespace strata {

std::optional<GpuCeilings> measure_gpu_ceilings() { return std::nullopt; }

}  // namespace strata
