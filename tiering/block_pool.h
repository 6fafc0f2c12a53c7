// BlockPool: the fixed-size slots that hold KV blocks in one tier's memory.
// On CPU builds this is the T1 tier (plain RAM) and the CPU backend computes
// in it directly. The pool knows nothing of models: a block is `block_bytes`
// opaque bytes, named by a BlockId (its slot index) so that block tables are
// plain int32 arrays.
//
// Threads: allocate / free / check_integrity are called by the engine thread
// only (no lock). data() may be read by compute threads while the engine
// thread is inside a forward pass, since no slot moves or is freed then.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace strata {

using BlockId = int32_t;  // slot index in [0, n_total)

class BlockPool {
 public:
  // Slots start on a page boundary (kSlotAlignment) so that a block can be
  // the buffer of an O_DIRECT read or write without a bounce copy.
  static constexpr int64_t kSlotAlignment = 4096;

  // n_blocks slots of block_bytes each (both > 0). The arena is reserved up
  // front, zero-filled and committed by the OS on first touch. Throws
  // std::bad_alloc if the address space cannot be reserved.
  BlockPool(int64_t block_bytes, int64_t n_blocks);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // O(1). nullopt when every slot is in use (an expected outcome: the
  // scheduler evicts, demotes or waits). The slot's bytes are whatever its
  // last user left.
  std::optional<BlockId> allocate();
  // O(1). Freeing a slot that is not allocated is a bug (check failure).
  void free(BlockId id);
  bool is_allocated(BlockId id) const;  // id must be in [0, n_total)

  // The slot's block_bytes bytes; id must be allocated.
  std::byte* data(BlockId id);
  const std::byte* data(BlockId id) const;

  // The whole arena (n_total slots), e.g. to pin it for DMA.
  std::span<std::byte> memory() { return {arena_, arena_bytes_}; }

  int64_t block_bytes() const { return block_bytes_; }
  int64_t slot_bytes() const { return slot_bytes_; }  // block_bytes rounded up to kSlotAlignment
  int64_t n_total() const { return static_cast<int64_t>(allocated_.size()); }
  int64_t n_free() const { return static_cast<int64_t>(free_list_.size()); }
  int64_t n_used() const { return n_total() - n_free(); }

  // Aborts unless the free list and the allocated flags agree: every slot is
  // exactly one of free (listed once) or allocated, and the counts add up.
  // O(n_total); for tests and debug builds.
  void check_integrity() const;

 private:
  int64_t block_bytes_ = 0;
  int64_t slot_bytes_ = 0;
  std::byte* arena_ = nullptr;  // n_total * slot_bytes_ bytes, page aligned (mmap)
  size_t arena_bytes_ = 0;
  // Free slots, used as a stack: the most recently freed slot is reused first
  // (its pages are the likeliest to be resident and in cache).
  std::vector<BlockId> free_list_;
  // allocated_[id] is 1 exactly when id is not on free_list_.
  std::vector<uint8_t> allocated_;
};

}  // namespace strata
