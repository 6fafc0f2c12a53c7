#include "service/server/model_file_guard.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "common/log.h"
#include "common/str_cat.h"

namespace strata {
namespace {

// Room for a PATH_MAX path and the words around it.
constexpr size_t kMessageBytes = 4096 + 512;

// One guarded mapping. A guard claims the slot (`taken`), writes the message
// and `begin`, then publishes `end` (release); it clears `end` before it frees
// the slot. The handler reads `end` (acquire) and, when it is not 0, the rest.
struct Slot {
  std::atomic<bool> taken{false};
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};  // one past the last guarded byte, page aligned; 0: none
  char message[kMessageBytes]{};  // one log line, ending in '\n'
  size_t message_size = 0;
};

// Everything the SIGBUS handler reads: the process-wide state a signal handler
// unavoidably needs (see the header). The handler is installed when the first
// guard becomes active and the previous action put back when the last goes.
struct SigbusState {
  Slot slots[ModelFileGuard::kMaxGuards];
  // Set by the first thread to fault in a guarded map: it writes the message
  // and exits; the others (a step reads the weights on every compute thread)
  // wait for that, so that the line is written once and whole.
  std::atomic<bool> exiting{false};
  std::mutex install_mutex;      // guards n_active and installing; never taken by the handler
  int n_active = 0;              // guards with a slot
  struct sigaction previous {};  // the action before the first guard; read by the handler
};

SigbusState g_sigbus;

void write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

// A SIGBUS that is not ours: the previous handler, or the default action.
void pass_on(int signal, siginfo_t* info, void* context) {
  const struct sigaction& previous = g_sigbus.previous;
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    if (previous.sa_sigaction != nullptr) previous.sa_sigaction(signal, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal);
    return;
  }
  // Ignored and sent by a process: ignore it. Otherwise the default action
  // (which a fault gets even when SIGBUS is ignored): the signal is blocked
  // while this handler runs, so raise() delivers it, unhandled, on return.
  if (previous.sa_handler == SIG_IGN && info->si_code <= 0) return;
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  ::sigaction(signal, &fallback, nullptr);
  ::raise(signal);
}

// Async-signal-safe only: atomics, write(2), _exit(2), pause(2), sigaction, raise.
void on_sigbus(int signal, siginfo_t* info, void* context) {
  // si_code > 0: the kernel raised it for an access of this thread; a process
  // sending SIGBUS (kill, sigqueue) cannot choose such a code.
  if (info->si_code > 0) {
    const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
    for (const Slot& slot : g_sigbus.slots) {
      const uintptr_t end = slot.end.load(std::memory_order_acquire);
      if (end != 0 && address >= slot.begin.load(std::memory_order_relaxed) && address < end) {
        if (g_sigbus.exiting.exchange(true)) {
          for (;;) ::pause();  // another thread is writing the message; its _exit ends us
        }
        write_all(STDERR_FILENO, slot.message, slot.message_size);
        ::_exit(ModelFileGuard::kExitCode);
      }
    }
  }
  pass_on(signal, info, context);
}

}  // namespace

ModelFileGuard::ModelFileGuard(std::span<const std::byte> mapping, std::string_view path) {
  if (mapping.empty()) return;  // an empty file has no map to fault in
  for (int i = 0; i < kMaxGuards && slot_ < 0; ++i) {
    if (!g_sigbus.slots[i].taken.exchange(true, std::memory_order_acq_rel)) slot_ = i;
  }
  if (slot_ < 0) {
    log_warning("more than ", kMaxGuards, " model files mapped: if ", path,
                " is truncated while it is served, the process dies of SIGBUS");
    return;
  }
  Slot& slot = g_sigbus.slots[slot_];
  std::string line = str_cat(
      "strata: error: the model file ", path,
      " changed while it was being served: it is shorter than when it was loaded, and reading "
      "its weights past the new end failed (SIGBUS); exiting so that it is loaded again\n");
  if (line.size() > kMessageBytes) line = line.substr(0, kMessageBytes - 4) + "...\n";
  std::memcpy(slot.message, line.data(), line.size());
  slot.message_size = line.size();
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(mapping.data());
  slot.begin.store(begin, std::memory_order_relaxed);
  slot.end.store((begin + mapping.size() + page - 1) / page * page, std::memory_order_release);

  std::lock_guard lock(g_sigbus.install_mutex);
  if (g_sigbus.n_active++ > 0) return;
  // The previous action is read before ours goes in: the handler may run at once.
  ::sigaction(SIGBUS, nullptr, &g_sigbus.previous);
  struct sigaction action {};
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, nullptr);
}

ModelFileGuard::~ModelFileGuard() {
  if (slot_ < 0) return;
  Slot& slot = g_sigbus.slots[slot_];
  slot.end.store(0, std::memory_order_release);
  {
    std::lock_guard lock(g_sigbus.install_mutex);
    if (--g_sigbus.n_active == 0) ::sigaction(SIGBUS, &g_sigbus.previous, nullptr);
  }
  slot.taken.store(false, std::memory_order_release);
}

}  // namespace strata
