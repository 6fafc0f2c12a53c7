#include "service/client/cancel_on_interrupt.h"

#include <pthread.h>

namespace strata {
namespace {

sigset_t interrupt_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR1);  // wakes the waiter when this is destroyed
  return set;
}

// The default action of SIGINT: the program ends, killed by the signal, as a shell expects.
void end_program_by_interrupt() {
  ::signal(SIGINT, SIG_DFL);
  sigset_t only_int;
  sigemptyset(&only_int);
  sigaddset(&only_int, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &only_int, nullptr);
  raise(SIGINT);
}

}  // namespace

CancelOnInterrupt::CancelOnInterrupt(DaemonClient& client) {
  sigset_t set = interrupt_set();
  pthread_sigmask(SIG_BLOCK, &set, &old_mask_);
  waiter_ = std::thread([this, set, &client] {
    for (;;) {
      int signal = 0;
      if (sigwait(&set, &signal) != 0 || stopping_.load()) return;
      if (signal == SIGINT && !client.cancel()) end_program_by_interrupt();
    }
  });
}

CancelOnInterrupt::~CancelOnInterrupt() {
  stopping_.store(true);
  pthread_kill(waiter_.native_handle(), SIGUSR1);
  waiter_.join();
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

}  // namespace strata
