#include "gpu/device_buffer.h"

#include <cuda_runtime_api.h>

#include "common/str_cat.h"
#include "gpu/cuda_check.h"

namespace strata {

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const cudaError_t status = cudaMalloc(&data_, bytes);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear it: an allocation failure is not sticky
    data_ = nullptr;
    bytes_ = 0;
    throw CudaError(str_cat("cannot allocate ", bytes, " bytes of GPU memory: ",
                            cudaGetErrorString(status)));
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::reserve(size_t bytes) {
  if (bytes <= bytes_) return;
  *this = DeviceBuffer(bytes);
}

}  // namespace strata
