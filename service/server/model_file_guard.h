// ModelFileGuard: a model file truncated under the running server ends it
// cleanly instead of with a bare "Bus error" core dump.
//
// The weights are read in place from a memory map of the file
// (common/mapped_file.h). When the file shrinks while it is mapped (`cp` or a
// download over it, `truncate`), reading a page past its new end raises
// SIGBUS. While a guard lives, such a fault inside the guarded mapping writes
// one line to standard error that names the file and says it changed, then
// ends the process with kExitCode: systemd (Restart=on-failure) starts a new
// server, which maps the file as it is now. Failing only the request instead
// would not be safe: the read that faulted is deep in a kernel, on a thread
// that holds the engine's state in the middle of a step.
//
// Any other SIGBUS (another mapping, a signal sent with kill) goes to the
// handler installed before the first guard, or takes the default action.
//
// A signal handler can only reach process-wide state, so the guarded ranges
// and their messages live in a fixed table of slots (model_file_guard.cpp): a
// mutable global, which the handler unavoidably needs, and the only state it
// reads. A guard fills its slot before publishing the range and unpublishes
// the range before freeing the slot; the handler only reads. At most
// kMaxGuards mappings are guarded at once (one per loaded model); a guard
// beyond that logs a warning and guards nothing.
//
// Threads: construct and destroy on any thread. The handler runs on whichever
// thread touched the page, and does only async-signal-safe work: an atomic
// range check, write(2) of the message built beforehand, _exit(2) (threads
// that fault meanwhile pause(2) until it ends the process).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace strata {

class ModelFileGuard {
 public:
  static constexpr int kExitCode = 1;  // a failure: systemd restarts the service
  static constexpr int kMaxGuards = 8;

  // Guards `mapping`, the whole map of the file at `path` (rounded up to whole
  // pages, as the map is).
  ModelFileGuard(std::span<const std::byte> mapping, std::string_view path);
  ~ModelFileGuard();
  ModelFileGuard(const ModelFileGuard&) = delete;
  ModelFileGuard& operator=(const ModelFileGuard&) = delete;

  // False when every slot was taken and this guard guards nothing.
  bool active() const { return slot_ >= 0; }

 private:
  int slot_ = -1;
};

}  // namespace strata
