// UringQueue: one io_uring instance (liburing) as DiskStore uses it: prepare
// reads and writes of whole byte ranges at file offsets, submit them in one
// batch, wait with a timeout, and reap completions in batches. It does no
// bookkeeping of its own: each operation carries a 64-bit user_data that
// DiskStore maps to its context, and results are liburing's (bytes done, or
// a negative errno).
//
// Kept apart from DiskStore so that liburing.h stays out of disk_store.h
// (strata::uring is a private dependency of strata_tiering).
//
// Threads: not thread-safe; DiskStore's owner (the tiering thread) calls it.
#pragma once

#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

struct io_uring;  // <liburing.h>, included by uring_queue.cpp only

namespace strata {

// One read or write of `length` bytes between `buffer` and `fd` at `offset`.
struct UringRequest {
  bool is_write = false;
  int fd = -1;
  std::byte* buffer = nullptr;  // read into / written from; valid until reaped
  uint32_t length = 0;
  uint64_t offset = 0;    // file offset in bytes
  int buffer_index = -1;  // registered buffer holding [buffer, buffer + length), or -1
};

// One completion: the request's user_data and its result (bytes done, or -errno).
struct UringResult {
  uint64_t user_data = 0;
  int32_t result = 0;
};

class UringQueue {
 public:
  // A ring of `entries` submission slots (the completion ring is twice that,
  // so it cannot overflow while at most `entries` are in flight). Throws
  // std::system_error("io_uring_queue_init") with the errno: ENOSYS where
  // the kernel has no io_uring, EPERM where it is disabled (sandboxes,
  // kernel.io_uring_disabled).
  explicit UringQueue(unsigned entries);
  ~UringQueue();
  UringQueue(const UringQueue&) = delete;
  UringQueue& operator=(const UringQueue&) = delete;

  // Fills one submission entry; false when the submission ring is full.
  // Nothing reaches the kernel until submit().
  bool prepare(const UringRequest& request, uint64_t user_data);
  // One io_uring_submit for everything prepared: the number submitted or
  // -errno. Entries the kernel did not take (-EAGAIN, -EBUSY) stay in the
  // ring and go with the next submit() or wait().
  int submit();
  // Prepared entries the kernel has not taken yet.
  unsigned n_unsubmitted() const;
  // Blocks until at least one completion is ready or `timeout` passes:
  // 0, -ETIME (timed out) or -EINTR. Submits anything still unsubmitted.
  int wait(std::chrono::nanoseconds timeout);
  // Moves up to out.size() ready completions into `out` without blocking;
  // returns how many.
  size_t reap(std::span<UringResult> out);

  // Registers `buffers` as fixed buffers (replacing any earlier set), for
  // requests with buffer_index >= 0. An empty span unregisters. 0 or -errno
  // (-ENOMEM over RLIMIT_MEMLOCK); on failure none are registered. Only
  // while nothing is in flight.
  int register_buffers(std::span<const iovec> buffers);

 private:
  std::unique_ptr<io_uring> ring_;
  bool buffers_registered_ = false;
};

}  // namespace strata
