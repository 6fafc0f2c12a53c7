// strata: the command line. Each subcommand lives in service/cli/ (bench/ for
// `strata bench`) and is registered here, in the order `strata --help` lists them.
#include <CLI/CLI.hpp>

#include <exception>

#include "bench/bench_command.h"
#include "common/log.h"
#include "service/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Strata: a local LLM server with a three-tier KV cache", "strata"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("strata ") + STRATA_VERSION);

  strata::add_serve_command(app);
  strata::add_info_command(app);
  strata::add_run_command(app);
  strata::add_chat_command(app);
  strata::add_stats_command(app);
  strata::add_bench_command(app);
  strata::add_tokenize_command(app);
  strata::add_devices_command(app);
  CLI::App* dev = app.add_subcommand("dev", "Tools for developing Strata and checking models");
  dev->require_subcommand(1);
  strata::add_render_chat_command(*dev);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    strata::log_error(e.what());
    return 1;
  }
  return 0;
}
