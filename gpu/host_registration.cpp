#include "gpu/host_registration.h"

#include <cuda_runtime_api.h>

namespace strata {

HostRegistration::HostRegistration(std::span<std::byte> memory) : data_(memory.data()) {
  const cudaError_t status =
      cudaHostRegister(memory.data(), memory.size_bytes(), cudaHostRegisterPortable);
  pinned_ = status == cudaSuccess;
  if (!pinned_) {
    error_ = cudaGetErrorString(status);
    cudaGetLastError();  // clear it: the failure is handled here
  }
}

HostRegistration::~HostRegistration() {
  if (pinned_) cudaHostUnregister(data_);
}

}  // namespace strata
