// Daemon: `strata serve` put together — listeners first (so /health answers
// while the model loads), the model loading on its own thread, systemd told
// how it goes, and SIGTERM / SIGINT handled as a graceful drain:
//   1. stop accepting and tell systemd STOPPING; idle connections close;
//   2. running generations may finish for shutdown-grace-seconds;
//   3. then the rest are cancelled (their streams get an error event), and the
//      daemon exits 0 once their connections have closed.
// A second signal skips to step 3.
//
// Threads: construct and run() on the main thread, which also runs HTTP
// connections together with http_threads - 1 more threads.
#pragma once

#include <string>

#include "service/config/serve_settings.h"

namespace strata {

class Daemon {
 public:
  explicit Daemon(ServeSettings settings);
  // Serves until a signal drains it (returns 0) or the model fails to load
  // (logs why, returns 1). Throws std::runtime_error when it cannot listen.
  int run();

 private:
  ServeSettings settings_;
};

}  // namespace strata
