// BlockMirror: where the engine computes in device memory (the CUDA backend's
// T0 arena), the host BlockPool slot of the same BlockId is only a mirror,
// filled on demand: before a block's bytes are written to disk they are
// copied down into its host slot, and after a load from disk into the host
// slot they are copied up. Without one (the CPU backend) the host slot is
// the block itself.
//
// Threads: the engine thread only (between steps).
#pragma once

#include <cstddef>

#include "tiering/block_pool.h"

namespace strata {

class BlockMirror {
 public:
  virtual ~BlockMirror() = default;
  // Both synchronous: when they return the copy is complete.
  virtual void copy_block_to_host(BlockId id, std::byte* host) = 0;
  virtual void copy_block_to_device(BlockId id, const std::byte* host) = 0;
};

}  // namespace strata
