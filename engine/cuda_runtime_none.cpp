// make_cuda_runtime in builds without the CUDA backend.
#include <stdexcept>

#include "engine/model_runtime.h"

namespace strata {

std::unique_ptr<ModelRuntime> make_cuda_runtime(const LoadedModel&, const RuntimeOptions&, int) {
  throw std::runtime_error("this build of strata has no CUDA backend (built without nvcc)");
}

}  // namespace strata
