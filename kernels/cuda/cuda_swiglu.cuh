// SwiGLU's element: silu(gate) * up. One expression for cuda_silu_mul and the
// tensor-core kernel's fused SwiGLU, so that both give the same bits.
#pragma once

namespace strata {

__device__ __forceinline__ float silu_times(float gate, float up) {
  return gate / (1.0f + expf(-gate)) * up;
}

}  // namespace strata
