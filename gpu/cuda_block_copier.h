// CudaBlockCopier: the DeviceCopier of the CUDA backend — block copies
// between the VRAM arena's slots and host slots on a non-blocking stream of
// their own, so they run while the compute stream runs forward passes. Each
// copy() call is one batch: its copies, then a host function that reports
// their tags (and wakes the engine). See tiering/device_copier.h for why no
// synchronisation with the compute stream is needed.
//
// Threads: the engine thread calls everything but the listener, which runs
// on a CUDA driver thread.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <vector>

#include "tiering/device_copier.h"

namespace strata {

class CudaBlockCopier final : public DeviceCopier {
 public:
  // Slot b of the arena starts at arena + b * slot_bytes; a copy moves
  // block_bytes. The arena must outlive the copier.
  CudaBlockCopier(std::byte* arena, int64_t slot_bytes, int64_t n_slots, int64_t block_bytes);
  ~CudaBlockCopier() override;  // waits for the copies in flight
  CudaBlockCopier(const CudaBlockCopier&) = delete;
  CudaBlockCopier& operator=(const CudaBlockCopier&) = delete;

  void copy(std::span<const BlockCopy> copies) override;
  std::vector<uint64_t> take_completed() override;
  void wait_idle() override;
  void set_listener(std::function<void()> on_completion) override;
  int64_t block_bytes() const override { return block_bytes_; }

 private:
  struct Batch {
    CudaBlockCopier* copier = nullptr;
    std::vector<uint64_t> tags;
  };
  static void CUDART_CB on_batch_done(void* batch);

  std::byte* const arena_;
  const int64_t slot_bytes_;
  const int64_t n_slots_;
  const int64_t block_bytes_;
  cudaStream_t stream_ = nullptr;

  std::mutex mutex_;
  std::vector<uint64_t> completed_;        // under mutex_
  std::function<void()> on_completion_;    // under mutex_
};

}  // namespace strata
