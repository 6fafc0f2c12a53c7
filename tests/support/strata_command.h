// Runs the built `strata` and `strata-dev` binaries the way a user does, for
// the command-line, bench and web tests.
#pragma once

#include <string>

namespace strata::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // standard output
  std::string errors;  // standard error
};

// Paths of the strata and strata-dev binaries in this build tree.
std::string strata_binary();
std::string strata_dev_binary();

// Runs `command_line` through /bin/sh and collects both streams.
CommandResult run_shell(const std::string& command_line);

// run_shell(strata_binary() + " " + args).
CommandResult run_strata(const std::string& args);
// run_shell(strata_dev_binary() + " " + args).
CommandResult run_strata_dev(const std::string& args);

std::string read_file(const std::string& path);

// build/test-models/NAME, its folder created.
std::string test_model_path(const std::string& name);

}  // namespace strata::testing
