#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "bench/gpu_ceilings.h"
#include "gpu/cuda_check.h"
#include "gpu/device_buffer.h"

namespace strata {
namespace {

// Times `body` with events: the median of `repeats` runs after a warm-up, in seconds.
template <typename Body>
double median_seconds(int repeats, Body body) {
  cudaEvent_t start, stop;
  STRATA_CUDA_CHECK(cudaEventCreate(&start));
  STRATA_CUDA_CHECK(cudaEventCreate(&stop));
  body();  // warm-up
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    STRATA_CUDA_CHECK(cudaEventRecord(start));
    body();
    STRATA_CUDA_CHECK(cudaEventRecord(stop));
    STRATA_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    STRATA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::nth_element(times.begin(), times.begin() + repeats / 2, times.end());
  return times[static_cast<size_t>(repeats / 2)];
}

// Random-looking bf16 values in [-1, 1): never time on zeros.
__global__ void fill_bf16(__nv_bfloat16* out, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    out[i] = __float2bfloat16(static_cast<float>(h & 0xffff) / 32768.0f - 1.0f);
  }
}

double copy_gb_per_s() {
  const size_t bytes = size_t{2} << 30;
  DeviceBuffer src(bytes);
  DeviceBuffer dst(bytes);
  fill_bf16<<<1024, 256>>>(src.as<__nv_bfloat16>(), bytes / 2, 1);
  STRATA_CUDA_CHECK_LAUNCH();
  const double s = median_seconds(9, [&] {
    STRATA_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice));
  });
  return 2.0 * static_cast<double>(bytes) / s / 1e9;
}

double gemm_tflops() {
  constexpr int n = 8192;
  const size_t elems = size_t{n} * n;
  DeviceBuffer a(elems * 2), b(elems * 2), c(elems * 4);
  fill_bf16<<<1024, 256>>>(a.as<__nv_bfloat16>(), elems, 2);
  fill_bf16<<<1024, 256>>>(b.as<__nv_bfloat16>(), elems, 3);
  STRATA_CUDA_CHECK_LAUNCH();
  cublasHandle_t handle = nullptr;
  STRATA_CUBLAS_CHECK(cublasCreate(&handle));
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const double s = median_seconds(9, [&] {
    STRATA_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha, a.data(),
                                     CUDA_R_16BF, n, b.data(), CUDA_R_16BF, n, &beta, c.data(),
                                     CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  });
  cublasDestroy(handle);
  return 2.0 * n * static_cast<double>(n) * n / s / 1e12;
}

bool have_gpu() {
  int n_devices = 0;
  if (cudaGetDeviceCount(&n_devices) != cudaSuccess || n_devices == 0) {
    cudaGetLastError();
    return false;
  }
  return true;
}

}  // namespace

std::optional<GpuCeilings> measure_gpu_ceilings() {
  if (!have_gpu()) return std::nullopt;
  return GpuCeilings{.copy_gb_per_s = copy_gb_per_s(), .gemm_tflops = gemm_tflops()};
}

std::optional<BusCeilings> measure_bus_ceilings(int64_t bytes) {
  if (!have_gpu() || bytes <= 0) return std::nullopt;
  const auto n = static_cast<size_t>(bytes);
  void* host = nullptr;
  STRATA_CUDA_CHECK(cudaHostAlloc(&host, n, cudaHostAllocDefault));
  std::fill_n(static_cast<unsigned char*>(host), n, static_cast<unsigned char>(0x5a));
  DeviceBuffer device(n);
  BusCeilings out{.bytes = bytes};
  out.to_device_gb_per_s = static_cast<double>(bytes) / median_seconds(5, [&] {
    STRATA_CUDA_CHECK(cudaMemcpyAsync(device.data(), host, n, cudaMemcpyHostToDevice));
  }) / 1e9;
  out.to_host_gb_per_s = static_cast<double>(bytes) / median_seconds(5, [&] {
    STRATA_CUDA_CHECK(cudaMemcpyAsync(host, device.data(), n, cudaMemcpyDeviceToHost));
  }) / 1e9;
  cudaFreeHost(host);
  return out;
}

}  // namespace strata
