// InterruptWatcher: turns Ctrl-C (SIGINT) into a flag a long computation
// polls, without a signal handler or a global: SIGINT is blocked in every
// thread (create the watcher before any other thread) and one thread waits
// for it with sigwait. A second Ctrl-C restores the default action, so a
// stuck program can still be killed.
#pragma once

#include <atomic>
#include <thread>

namespace strata {

class InterruptWatcher {
 public:
  InterruptWatcher();
  ~InterruptWatcher();
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  // Set once SIGINT arrives; pass to whatever should stop.
  const std::atomic<bool>& interrupted() const { return interrupted_; }

 private:
  std::atomic<bool> interrupted_{false};
  std::atomic<bool> stopping_{false};
  std::thread waiter_;
};

}  // namespace strata
