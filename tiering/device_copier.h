// DeviceCopier: block copies between the VRAM arena (T0, named by BlockId)
// and host memory (T1 slots), on a copy stream of their own so that they
// overlap the forward passes on the compute stream. The engine thread queues
// them between steps; they complete later, in order, and are reported by tag.
// (The CUDA one is gpu/cuda_block_copier.h.)
//
// Why no stream synchronisation with compute is needed: a step ends with its
// logits copied to the host, so every K/V write of the step is done before
// the engine queues copies; a block copied down is a full, published block
// (immutable) pinned against eviction until its copy completes; a block
// copied up is private, in no block table, until its completion is taken.
//
// Threads: copy / take_completed / wait_idle on the engine thread; the
// listener runs on a driver thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "tiering/block_pool.h"

namespace strata {

struct BlockCopy {
  enum class Direction { kToHost, kToDevice };
  Direction direction = Direction::kToHost;
  BlockId device_block = 0;
  std::byte* host = nullptr;  // a host slot of the block's bytes; alive until completion
  uint64_t tag = 0;
};

class DeviceCopier {
 public:
  virtual ~DeviceCopier() = default;
  // Queues the copies, in order, on the copy stream.
  virtual void copy(std::span<const BlockCopy> copies) = 0;
  // Tags of the copies completed since the last call, in queue order.
  virtual std::vector<uint64_t> take_completed() = 0;
  // Waits until every queued copy has completed (shutdown, tests).
  virtual void wait_idle() = 0;
  // Called after copies complete (to wake the engine); must not block or call
  // back into the copier. Set to nullptr before the listener goes away.
  virtual void set_listener(std::function<void()> on_completion) = 0;
  virtual int64_t block_bytes() const = 0;
};

}  // namespace strata
