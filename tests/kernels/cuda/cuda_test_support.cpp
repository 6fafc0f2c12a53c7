#include "tests/kernels/cuda/cuda_test_support.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "gpu/cuda_check.h"
#include "gpu/gpu_devices.h"

namespace strata::testing {

bool cuda_available() {
  static const bool available = !probe_gpus().devices.empty();
  return available;
}

DeviceBuffer to_device(std::span<const std::byte> bytes) {
  DeviceBuffer buffer(bytes.size());
  STRATA_CUDA_CHECK(cudaMemcpy(buffer.data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  return buffer;
}

template <typename T>
std::vector<T> to_host(const DeviceBuffer& buffer, size_t n) {
  STRATA_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<T> out(n);
  STRATA_CUDA_CHECK(cudaMemcpy(out.data(), buffer.data(), n * sizeof(T), cudaMemcpyDeviceToHost));
  return out;
}
template std::vector<float> to_host<float>(const DeviceBuffer&, size_t);
template std::vector<int32_t> to_host<int32_t>(const DeviceBuffer&, size_t);
template std::vector<uint16_t> to_host<uint16_t>(const DeviceBuffer&, size_t);
template std::vector<std::byte> to_host<std::byte>(const DeviceBuffer&, size_t);

DeviceBuffer poisoned_floats(size_t n) {
  return to_device(std::vector<float>(n, std::numeric_limits<float>::quiet_NaN()));
}

std::vector<float> random_floats(size_t n, std::mt19937& rng, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> out(n);
  for (float& v : out) v = normal(rng);
  return out;
}

double relative_error(std::span<const float> out, std::span<const float> ref) {
  if (out.size() != ref.size()) return std::numeric_limits<double>::infinity();
  double diff = 0.0;
  double norm = 0.0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (std::isnan(out[i])) return std::numeric_limits<double>::infinity();
    const double d = static_cast<double>(out[i]) - ref[i];
    diff += d * d;
    norm += static_cast<double>(ref[i]) * ref[i];
  }
  return norm == 0.0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}

}  // namespace strata::testing
