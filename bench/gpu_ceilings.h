// The GPU's two ceilings, measured now on the current device, that benchmark
// figures are compared to (METHOD: ratios survive a noisy machine):
//   - copy bandwidth: a large device-to-device copy, counting bytes read
//     plus bytes written (what bounds decode, which streams the weights);
//   - matrix rate: a large bf16 GEMM through cuBLAS on random data (what
//     bounds prefill);
//   - bus rate: plain cudaMemcpy of one large pinned host buffer to the
//     device and back (what bounds moves between VRAM and host memory).
#pragma once

#include <cstdint>
#include <optional>

namespace strata {

struct GpuCeilings {
  double copy_gb_per_s = 0;  // (read + written) bytes / s, / 1e9
  double gemm_tflops = 0;    // bf16 in, f32 accumulate, / 1e12
};

// nullopt in a build without CUDA or without a usable GPU. Takes about a
// second and a few GiB of VRAM (freed before it returns).
std::optional<GpuCeilings> measure_gpu_ceilings();

struct BusCeilings {
  int64_t bytes = 0;               // copied each way, in one cudaMemcpy
  double to_device_gb_per_s = 0;   // host -> device, / 1e9
  double to_host_gb_per_s = 0;     // device -> host
};

// nullopt as above. `bytes` of pinned host memory and of VRAM for a moment.
std::optional<BusCeilings> measure_bus_ceilings(int64_t bytes);

}  // namespace strata
