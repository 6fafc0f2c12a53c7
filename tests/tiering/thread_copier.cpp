#include "tests/tiering/thread_copier.h"

#include <cstring>
#include <utility>

#include "common/check.h"

namespace strata::testing {

ThreadCopier::ThreadCopier(std::span<std::byte> device_memory, int64_t slot_bytes,
                           int64_t block_bytes)
    : device_(device_memory), slot_bytes_(slot_bytes), block_bytes_(block_bytes),
      thread_([this] { run(); }) {}

ThreadCopier::~ThreadCopier() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    held_ = false;
  }
  wake_.notify_all();
  thread_.join();
}

void ThreadCopier::copy(std::span<const BlockCopy> copies) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.emplace_back(copies.begin(), copies.end());
  }
  wake_.notify_all();
}

std::vector<uint64_t> ThreadCopier::take_completed() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(completed_, {});
}

void ThreadCopier::wait_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  STRATA_CHECK(!held_ || queue_.empty(), "wait_idle while held would never return");
  wake_.wait(lock, [&] { return queue_.empty() && n_running_ == 0; });
}

void ThreadCopier::set_listener(std::function<void()> on_completion) {
  std::lock_guard<std::mutex> lock(mutex_);
  on_completion_ = std::move(on_completion);
}

void ThreadCopier::hold(bool held) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    held_ = held;
  }
  wake_.notify_all();
}

int64_t ThreadCopier::n_copied() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return n_copied_;
}

void ThreadCopier::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || (!held_ && !queue_.empty()); });
    if (queue_.empty()) return;  // stopping
    std::vector<BlockCopy> batch = std::move(queue_.front());
    queue_.pop_front();
    ++n_running_;
    lock.unlock();
    for (const BlockCopy& c : batch) {
      const auto offset = static_cast<size_t>(c.device_block * slot_bytes_);
      STRATA_CHECK(offset + static_cast<size_t>(block_bytes_) <= device_.size(), "block ",
                   c.device_block);
      std::byte* slot = device_.data() + offset;
      if (c.direction == BlockCopy::Direction::kToHost) {
        std::memcpy(c.host, slot, static_cast<size_t>(block_bytes_));
      } else {
        std::memcpy(slot, c.host, static_cast<size_t>(block_bytes_));
      }
    }
    lock.lock();
    --n_running_;
    n_copied_ += static_cast<int64_t>(batch.size());
    for (const BlockCopy& c : batch) completed_.push_back(c.tag);
    if (on_completion_) on_completion_();
    wake_.notify_all();
  }
}

}  // namespace strata::testing
