// GPU discovery: which CUDA devices this process can run Strata's kernels on.
// In a build without CUDA, or on a machine without an NVIDIA driver, the list
// is empty and `unavailable_reason` says why, so the CPU backend serves.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

struct GpuDevice {
  int index = 0;
  std::string name;  // "NVIDIA H200"
  int compute_major = 0;
  int compute_minor = 0;
  uint64_t memory_bytes = 0;
  int multiprocessors = 0;
};

struct GpuProbe {
  bool cuda_built = false;  // compiled with the CUDA backend
  int driver_version = 0;   // e.g. 13000 for CUDA 13.0; 0 without a driver
  int runtime_version = 0;
  // Devices that ran a test kernel of this binary (its code covers their
  // architecture); in index order.
  std::vector<GpuDevice> devices;
  std::string unavailable_reason;  // set when devices is empty
};

// Queries the driver and runs a one-thread kernel on each device. Safe to
// call without a driver. Call from one thread at start-up.
GpuProbe probe_gpus();

}  // namespace strata
