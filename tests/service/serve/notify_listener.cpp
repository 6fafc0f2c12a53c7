#include "tests/service/serve/notify_listener.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace strata::testing {

using Clock = std::chrono::steady_clock;

NotifyListener::NotifyListener(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const int on = 1;
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::setsockopt(fd_, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0) {
    if (fd_ >= 0) ::close(fd_);
    throw std::runtime_error("cannot bind the notify socket " + path);
  }
}

NotifyListener::~NotifyListener() { ::close(fd_); }

bool NotifyListener::wait_for(const std::string& text, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (index_of(text) >= 0) return true;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0 || !receive(left)) return false;
  }
}

void NotifyListener::drain() {
  while (receive(std::chrono::milliseconds(0))) {
  }
}

int NotifyListener::index_of(const std::string& text) const {
  for (size_t i = 0; i < messages_.size(); ++i) {
    if (messages_[i].text.find(text) != std::string::npos) return static_cast<int>(i);
  }
  return -1;
}

std::string NotifyListener::all() const {
  std::string out;
  for (const Message& m : messages_) {
    out += "[" + m.text + "] from " + std::to_string(m.sender) + "\n";
  }
  return out;
}

bool NotifyListener::receive(std::chrono::milliseconds timeout) {
  pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
  char data[4096];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
  iovec iov{.iov_base = data, .iov_len = sizeof data};
  msghdr header{};
  header.msg_iov = &iov;
  header.msg_iovlen = 1;
  header.msg_control = control;
  header.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(fd_, &header, MSG_DONTWAIT);
  if (n < 0) return false;
  Message message{.text = std::string(data, static_cast<size_t>(n))};
  for (cmsghdr* c = CMSG_FIRSTHDR(&header); c != nullptr; c = CMSG_NXTHDR(&header, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
      ucred credentials{};
      std::memcpy(&credentials, CMSG_DATA(c), sizeof credentials);
      message.sender = credentials.pid;
    }
  }
  messages_.push_back(std::move(message));
  return true;
}

}  // namespace strata::testing
