// measure_gpu_ceilings and measure_bus_ceilings in builds without the CUDA backend.
#include "bench/gpu_ceilings.h"

namespace strata {

std::optional<GpuCeilings> measure_gpu_ceilings() { return std::nullopt; }

std::optional<BusCeilings> measure_bus_ceilings(int64_t) { return std::nullopt; }

}  // namespace strata
