#include "tests/support/strata_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace strata::testing {

std::string strata_binary() { return std::string(STRATA_BINARY_DIR) + "/service/strata"; }
std::string strata_dev_binary() { return std::string(STRATA_BINARY_DIR) + "/dev/strata-dev"; }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

CommandResult run_shell(const std::string& command_line) {
  const std::string stderr_path = (std::filesystem::temp_directory_path() /
                                   ("strata_command_" + std::to_string(getpid())))
                                      .string();
  CommandResult result;
  FILE* pipe = popen((command_line + " 2>" + stderr_path).c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), n);
  }
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.errors = read_file(stderr_path);
  std::filesystem::remove(stderr_path);
  return result;
}

CommandResult run_strata_dev(const std::string& args) {
  return run_shell(strata_dev_binary() + " " + args);
}

CommandResult run_strata(const std::string& args) {
  return run_shell(strata_binary() + " " + args);
}

std::string test_model_path(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(STRATA_BINARY_DIR) / "test-models";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

}  // namespace strata::testing
