// The current CUDA device's properties that kernel launchers size their
// grids by. Host-only; each call asks the runtime (no cache: the current
// device is the caller's thread's, and the query costs well under a
// microsecond).
#pragma once

namespace strata {

// Streaming multiprocessors of the current device.
int cuda_multiprocessor_count();

// The most shared memory one block of the current device may opt into.
int cuda_max_shared_memory_per_block();

// Whether the current device runs programmatic dependent launches (sm_90+:
// kernels/cuda/cuda_dependent_launch.cuh).
bool cuda_dependent_launch_supported();

}  // namespace strata
