// NotifyListener: the service manager's end of NOTIFY_SOCKET, for the tests
// that play systemd: a datagram socket bound to a path that receives sd_notify
// messages and learns each sender's pid (SO_PASSCRED), as systemd does for
// NotifyAccess=main.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace strata::testing {

class NotifyListener {
 public:
  struct Message {
    std::string text;
    pid_t sender = -1;
  };

  // Binds `path`; throws std::runtime_error when it cannot.
  explicit NotifyListener(const std::string& path);
  ~NotifyListener();
  NotifyListener(const NotifyListener&) = delete;
  NotifyListener& operator=(const NotifyListener&) = delete;

  // Receives until a message contains `text`; every message received is kept.
  bool wait_for(const std::string& text, std::chrono::milliseconds timeout);
  // Everything waiting now, without blocking.
  void drain();

  const std::vector<Message>& messages() const { return messages_; }
  // The index of the first message containing `text`, or -1.
  int index_of(const std::string& text) const;
  // Every message with its sender, one a line, for failure output.
  std::string all() const;

 private:
  bool receive(std::chrono::milliseconds timeout);

  int fd_ = -1;
  std::vector<Message> messages_;
};

}  // namespace strata::testing
