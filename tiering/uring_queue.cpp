#include "tiering/uring_queue.h"

#include <liburing.h>

#include <algorithm>
#include <system_error>

namespace strata {

UringQueue::UringQueue(unsigned entries) : ring_(std::make_unique<io_uring>()) {
  io_uring_params params{};
  params.flags = IORING_SETUP_CQSIZE;
  params.cq_entries = 2 * entries;
  const int error = io_uring_queue_init_params(entries, ring_.get(), &params);
  if (error < 0) throw std::system_error(-error, std::system_category(), "io_uring_queue_init");
}

UringQueue::~UringQueue() { io_uring_queue_exit(ring_.get()); }

bool UringQueue::prepare(const UringRequest& request, uint64_t user_data) {
  io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
  if (sqe == nullptr) return false;
  if (request.buffer_index >= 0 && request.is_write) {
    io_uring_prep_write_fixed(sqe, request.fd, request.buffer, request.length, request.offset,
                              request.buffer_index);
  } else if (request.buffer_index >= 0) {
    io_uring_prep_read_fixed(sqe, request.fd, request.buffer, request.length, request.offset,
                             request.buffer_index);
  } else if (request.is_write) {
    io_uring_prep_write(sqe, request.fd, request.buffer, request.length, request.offset);
  } else {
    io_uring_prep_read(sqe, request.fd, request.buffer, request.length, request.offset);
  }
  io_uring_sqe_set_data64(sqe, user_data);
  return true;
}

int UringQueue::submit() { return io_uring_submit(ring_.get()); }

unsigned UringQueue::n_unsubmitted() const { return io_uring_sq_ready(ring_.get()); }

int UringQueue::wait(std::chrono::nanoseconds timeout) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  __kernel_timespec ts{};
  ts.tv_sec = seconds.count();
  ts.tv_nsec = (timeout - seconds).count();
  io_uring_cqe* cqe = nullptr;
  // Leaves the completion in the ring for reap().
  return io_uring_wait_cqe_timeout(ring_.get(), &cqe, &ts);
}

size_t UringQueue::reap(std::span<UringResult> out) {
  constexpr unsigned kBatch = 64;
  io_uring_cqe* cqes[kBatch];
  const unsigned want = static_cast<unsigned>(std::min<size_t>(out.size(), kBatch));
  const unsigned n = io_uring_peek_batch_cqe(ring_.get(), cqes, want);
  for (unsigned i = 0; i < n; ++i) out[i] = {io_uring_cqe_get_data64(cqes[i]), cqes[i]->res};
  io_uring_cq_advance(ring_.get(), n);
  return n;
}

int UringQueue::register_buffers(std::span<const iovec> buffers) {
  if (buffers_registered_) io_uring_unregister_buffers(ring_.get());
  buffers_registered_ = false;
  if (buffers.empty()) return 0;
  const int error =
      io_uring_register_buffers(ring_.get(), buffers.data(), static_cast<unsigned>(buffers.size()));
  buffers_registered_ = error == 0;
  return error;
}

}  // namespace strata
