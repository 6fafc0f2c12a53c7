#include "gpu/cuda_check.h"

#include "common/str_cat.h"

namespace strata {

void cuda_fail(cudaError_t status, const char* call, const char* file, int line) {
  throw CudaError(str_cat("CUDA error ", cudaGetErrorName(status), " (",
                          cudaGetErrorString(status), ") in ", call, " at ", file, ":", line));
}

void cublas_fail(int status, const char* call, const char* file, int line) {
  throw CudaError(str_cat("cuBLAS error ", status, " in ", call, " at ", file, ":", line));
}

}  // namespace strata
