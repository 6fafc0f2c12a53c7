#include "tests/service/serve/node_client.h"

#include <filesystem>

#include "tests/support/strata_command.h"

namespace strata::testing {
namespace {

const std::string kNodeDir = std::string(STRATA_SOURCE_DIR) + "/tools/node";

// The last line of `output` that parses as a JSON object.
nlohmann::json last_json_line(const std::string& output) {
  size_t end = output.size();
  while (end > 0) {
    const size_t start = output.rfind('\n', end - 1);
    const size_t from = start == std::string::npos ? 0 : start + 1;
    const std::string line = output.substr(from, end - from);
    if (!line.empty() && line.front() == '{') {
      nlohmann::json parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_object()) return parsed;
    }
    if (start == std::string::npos) break;
    end = start;
  }
  return nlohmann::json();
}

}  // namespace

bool node_package_installed(const std::string& package) {
  return run_shell("command -v node").exit_code == 0 &&
         std::filesystem::exists(kNodeDir + "/node_modules/" + package + "/package.json");
}

NodeCheck run_node_check(const std::string& script, const std::string& args) {
  CommandResult r = run_shell("node " + kNodeDir + "/" + script + " " + args);
  return NodeCheck{.exit_code = r.exit_code,
                   .summary = last_json_line(r.output),
                   .output = r.output,
                   .errors = r.errors};
}

}  // namespace strata::testing
