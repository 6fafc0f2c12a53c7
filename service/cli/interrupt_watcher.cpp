#include "service/cli/interrupt_watcher.h"

#include <pthread.h>
#include <signal.h>

namespace strata {
namespace {

sigset_t interrupt_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR1);  // wakes the waiter when the watcher is destroyed
  return set;
}

}  // namespace

InterruptWatcher::InterruptWatcher() {
  sigset_t set = interrupt_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // inherited by threads created later
  waiter_ = std::thread([this, set] {
    for (;;) {
      int signal = 0;
      if (sigwait(&set, &signal) != 0 || stopping_.load()) return;
      if (signal != SIGINT) continue;
      if (interrupted_.exchange(true)) {
        // Second Ctrl-C: default action (terminate), as a user expects.
        ::signal(SIGINT, SIG_DFL);
        sigset_t only_int;
        sigemptyset(&only_int);
        sigaddset(&only_int, SIGINT);
        pthread_sigmask(SIG_UNBLOCK, &only_int, nullptr);
        raise(SIGINT);
      }
    }
  });
}

InterruptWatcher::~InterruptWatcher() {
  stopping_.store(true);
  pthread_kill(waiter_.native_handle(), SIGUSR1);
  waiter_.join();
}

}  // namespace strata
