#include "tiering/block_pool.h"

#include <sys/mman.h>

#include <new>

#include "common/check.h"

namespace strata {

BlockPool::BlockPool(int64_t block_bytes, int64_t n_blocks)
    : block_bytes_(block_bytes),
      slot_bytes_((block_bytes + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment) {
  STRATA_CHECK(block_bytes > 0 && n_blocks > 0, "block_bytes ", block_bytes, " n_blocks ",
               n_blocks);
  STRATA_CHECK(n_blocks <= INT32_MAX, "BlockId is int32: ", n_blocks, " blocks");
  arena_bytes_ = static_cast<size_t>(slot_bytes_) * static_cast<size_t>(n_blocks);
  // An anonymous private map: page aligned, zero-filled, and committed lazily,
  // so a large pool costs nothing until its slots are used. No swap is
  // reserved up front: the CUDA runtime's pool only names the VRAM arena's
  // slots (its BlockIds) and never touches its own bytes.
  void* arena = mmap(nullptr, arena_bytes_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (arena == MAP_FAILED) throw std::bad_alloc();
  arena_ = static_cast<std::byte*>(arena);

  allocated_.assign(static_cast<size_t>(n_blocks), 0);
  free_list_.reserve(static_cast<size_t>(n_blocks));
  // Pushed in reverse so that the first allocations hand out 0, 1, 2, ...
  for (int64_t id = n_blocks - 1; id >= 0; --id) free_list_.push_back(static_cast<BlockId>(id));
}

BlockPool::~BlockPool() { munmap(arena_, arena_bytes_); }

std::optional<BlockId> BlockPool::allocate() {
  if (free_list_.empty()) return std::nullopt;
  const BlockId id = free_list_.back();
  free_list_.pop_back();
  STRATA_CHECK(allocated_[static_cast<size_t>(id)] == 0, "free list held allocated block ", id);
  allocated_[static_cast<size_t>(id)] = 1;
  return id;
}

void BlockPool::free(BlockId id) {
  STRATA_CHECK(is_allocated(id), "double free (or never allocated): block ", id);
  allocated_[static_cast<size_t>(id)] = 0;
  free_list_.push_back(id);
}

bool BlockPool::is_allocated(BlockId id) const {
  STRATA_CHECK(id >= 0 && id < n_total(), "block id ", id, " outside [0, ", n_total(), ")");
  return allocated_[static_cast<size_t>(id)] != 0;
}

std::byte* BlockPool::data(BlockId id) {
  STRATA_CHECK(is_allocated(id), "data() of free block ", id);
  return arena_ + static_cast<size_t>(id) * static_cast<size_t>(slot_bytes_);
}

const std::byte* BlockPool::data(BlockId id) const {
  STRATA_CHECK(is_allocated(id), "data() of free block ", id);
  return arena_ + static_cast<size_t>(id) * static_cast<size_t>(slot_bytes_);
}

void BlockPool::check_integrity() const {
  std::vector<uint8_t> listed(allocated_.size(), 0);
  for (BlockId id : free_list_) {
    STRATA_CHECK(id >= 0 && id < n_total(), "free list holds bad id ", id);
    STRATA_CHECK(listed[static_cast<size_t>(id)] == 0, "block ", id, " listed free twice");
    STRATA_CHECK(allocated_[static_cast<size_t>(id)] == 0, "block ", id,
                 " both free and allocated");
    listed[static_cast<size_t>(id)] = 1;
  }
  int64_t n_allocated = 0;
  for (size_t id = 0; id < allocated_.size(); ++id) {
    STRATA_CHECK(allocated_[id] <= 1, "bad flag for block ", id);
    n_allocated += allocated_[id];
    STRATA_CHECK(allocated_[id] == 1 || listed[id] == 1, "block ", id, " neither free nor used");
  }
  STRATA_CHECK(n_allocated + n_free() == n_total(), "used ", n_allocated, " + free ", n_free(),
               " != total ", n_total());
}

}  // namespace strata
