// strata serve --model PATH [--socket PATH] [--host 127.0.0.1] [--port 8080] [--config FILE] ...
// The daemon: the OpenAI-compatible API on a Unix socket and loopback TCP.
// Every setting can also come from the config file and the environment
// (service/config/serve_settings.h); the work is in service/server/daemon.h.
#include <memory>

#include "service/cli/commands.h"
#include "service/config/serve_settings.h"
#include "service/server/daemon.h"

namespace strata {

void add_serve_command(CLI::App& app) {
  auto flags = std::make_shared<ServeSettingsFlags>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "Serve the OpenAI-compatible API on a Unix socket and loopback TCP");
  add_serve_options(*cmd, *flags);
  cmd->callback([flags] {
    Daemon daemon(resolve_serve_settings(*flags));
    const int exit_code = daemon.run();
    if (exit_code != 0) throw CLI::RuntimeError(exit_code);
  });
}

}  // namespace strata
