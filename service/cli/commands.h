// The `strata` subcommands. Each add_*_command registers its subcommand, flags
// and callback on the application; the callback throws std::exception with a
// message for the user on failure.
#pragma once

#include <CLI/CLI.hpp>

namespace strata {

void add_info_command(CLI::App& app);      // strata info MODEL.gguf [--json]
void add_tokenize_command(CLI::App& app);  // strata tokenize MODEL.gguf TEXT [--special]
void add_serve_command(CLI::App& app);     // strata serve --model MODEL.gguf ...
void add_run_command(CLI::App& app);       // strata run -m MODEL.gguf [-p PROMPT] ...
void add_chat_command(CLI::App& app);      // strata chat [--server SOCKET] ...
void add_stats_command(CLI::App& app);     // strata stats [--server SOCKET] [--json]
void add_devices_command(CLI::App& app);   // strata devices [--json]

// `strata dev ...`: tools for developing Strata and checking models. Each takes the
// `dev` subcommand group.
void add_render_chat_command(CLI::App& dev);  // strata dev render-chat MODEL.gguf ...

}  // namespace strata
