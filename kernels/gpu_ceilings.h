// The GPU's two ceilings, measured now on the current device, that benchmark
// figures are compared to (METHOD: ratios survive a noisy machine):
//   - copy bandwidth: a large device-to-device copy, counting bytes read
//     plus bytes written (what bounds decode, which streams the weights);
//   - matrix rate: a large bf16 GEMM through cuBLAS on random data (what
//     bounds prefill).
#pragma once

#include <optional>

namespace strata {

struct GpuCeilings {
  double copy_gb_per_s = 0;  // (read + written) bytes / s, / 1e9
  double gemm_tflops = 0;    // bf16 in, f32 accumulate, / 1e12
};

// nullopt in a build without CUDA or without a usable GPU. Takes about a
// second and a few GiB of VRAM (freed before it returns).
std::optional<GpuCeilings> measure_gpu_ceilings();

}  // namespace strata
