// Error checks for CUDA runtime and cuBLAS calls. A failed call throws
// CudaError naming the call, the file:line and the driver's message: at start
// (out of memory, no device) that is a message the user can act on; in the
// step loop it fails the batch, as any backend error does.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>

namespace strata {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void cuda_fail(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void cublas_fail(int status, const char* call, const char* file, int line);

inline void cuda_check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) [[unlikely]] cuda_fail(status, call, file, line);
}

}  // namespace strata

#define STRATA_CUDA_CHECK(call) ::strata::cuda_check((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch errors (bad configuration, missing code for
// this architecture) surface here rather than at the next synchronisation.
#define STRATA_CUDA_CHECK_LAUNCH() STRATA_CUDA_CHECK(cudaGetLastError())
#define STRATA_CUBLAS_CHECK(call)                                                  \
  do {                                                                             \
    const int strata_cublas_status = static_cast<int>(call);                       \
    if (strata_cublas_status != 0) [[unlikely]]                                    \
      ::strata::cublas_fail(strata_cublas_status, #call, __FILE__, __LINE__);      \
  } while (0)
