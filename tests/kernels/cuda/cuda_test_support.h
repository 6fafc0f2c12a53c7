// Shared by the CUDA kernel tests: skipping without a device, host<->device
// copies, random inputs and the relative error against a CPU reference.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "gpu/device_buffer.h"

namespace strata::testing {

// True when a CUDA device runs this build's kernels; tests GTEST_SKIP otherwise:
//   if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
bool cuda_available();

DeviceBuffer to_device(std::span<const std::byte> bytes);
template <typename T>
DeviceBuffer to_device(const std::vector<T>& values) {
  return to_device(std::as_bytes(std::span<const T>(values)));
}
// Synchronises the device, then copies n elements back.
template <typename T>
std::vector<T> to_host(const DeviceBuffer& buffer, size_t n);
// A device buffer of n floats filled with NaN: outputs a kernel forgot to write stay NaN.
DeviceBuffer poisoned_floats(size_t n);

std::vector<float> random_floats(size_t n, std::mt19937& rng, float scale = 1.0f);

// ||out - ref|| / ||ref|| in float64; infinity if out holds a NaN or the sizes differ.
double relative_error(std::span<const float> out, std::span<const float> ref);

}  // namespace strata::testing
