// The current CUDA device's properties that kernel launchers size their
// grids by. Host-only; each call asks the runtime (no cache: the current
// device is the caller's thread's, and the query costs well under a
// microsecond).
#pragma once

namespace strata {

// Streaming multiprocessors of the current device.
int cuda_multiprocessor_count();

}  // namespace strata
