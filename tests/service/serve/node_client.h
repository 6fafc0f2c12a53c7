// The SDK check scripts of tools/node (openai_client_check.mjs, ...): each talks to a
// running server through an official client package and prints one JSON summary line
// last. This runs one and reads that summary.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace strata::testing {

struct NodeCheck {
  int exit_code = -1;
  nlohmann::json summary;  // null when the script printed none
  std::string output;      // standard output
  std::string errors;      // standard error
};

// Whether node runs here and tools/node/node_modules holds `package`.
bool node_package_installed(const std::string& package);

// `node tools/node/SCRIPT ARGS`.
NodeCheck run_node_check(const std::string& script, const std::string& args);

}  // namespace strata::testing
