// strata-dev: the developer tools, apart from the daemon. They write models
// (seeded random weights with a real tokenizer, or a Hugging Face checkpoint
// converted) for tests, benchmarks and the bundled demo model.
#include <CLI/CLI.hpp>

#include <exception>
#include <string>

#include "common/log.h"
#include "dev/import_weights_command.h"
#include "dev/make_model_command.h"

int main(int argc, char** argv) {
  CLI::App app{"Strata's developer tools: write test and benchmark models", "strata-dev"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("strata-dev ") + STRATA_VERSION);

  strata::add_make_model_command(app);
  strata::add_import_weights_command(app);

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
