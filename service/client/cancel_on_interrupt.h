// CancelOnInterrupt: Ctrl-C for a command that talks to `strata serve`. While a reply
// streams, SIGINT cancels it (DaemonClient::cancel): the reply stops, the server stops
// generating when the connection closes, and the command goes on. With no reply
// streaming, SIGINT ends the program as it normally would.
//
// As with InterruptWatcher, SIGINT is blocked in the creating thread (and so in threads
// it creates later) and one thread waits for it with sigwait: create this before any
// other thread. Destroy it before the client.
#pragma once

#include <signal.h>

#include <atomic>
#include <thread>

#include "service/client/daemon_client.h"

namespace strata {

class CancelOnInterrupt {
 public:
  explicit CancelOnInterrupt(DaemonClient& client);
  ~CancelOnInterrupt();  // restores the creating thread's signal mask
  CancelOnInterrupt(const CancelOnInterrupt&) = delete;
  CancelOnInterrupt& operator=(const CancelOnInterrupt&) = delete;

 private:
  sigset_t old_mask_;
  std::atomic<bool> stopping_{false};
  std::thread waiter_;
};

}  // namespace strata
