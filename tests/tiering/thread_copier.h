// ThreadCopier: a DeviceCopier for tests without a GPU. Its "device" is host
// memory — the slots of a BlockPool, e.g. the one the CPU backend computes
// in — and a thread of its own does the copies in order, like a copy stream,
// so that completions arrive asynchronously as they do on a GPU.
// hold() stops it before the next batch (tests of moves in flight).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "tiering/device_copier.h"

namespace strata::testing {

class ThreadCopier final : public DeviceCopier {
 public:
  // Device block b is at device_memory + b * slot_bytes.
  ThreadCopier(std::span<std::byte> device_memory, int64_t slot_bytes, int64_t block_bytes);
  ~ThreadCopier() override;

  void copy(std::span<const BlockCopy> copies) override;
  std::vector<uint64_t> take_completed() override;
  void wait_idle() override;
  void set_listener(std::function<void()> on_completion) override;
  int64_t block_bytes() const override { return block_bytes_; }

  void hold(bool held);  // while held, queued batches wait
  int64_t n_copied() const;

 private:
  void run();

  const std::span<std::byte> device_;
  const int64_t slot_bytes_;
  const int64_t block_bytes_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::vector<BlockCopy>> queue_;
  std::vector<uint64_t> completed_;
  std::function<void()> on_completion_;
  int64_t n_running_ = 0;
  int64_t n_copied_ = 0;
  bool held_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace strata::testing
