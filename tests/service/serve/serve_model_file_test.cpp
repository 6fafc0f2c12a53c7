// `strata serve` when its model file is truncated while it serves: the weights
// are read in place from a memory map, so on the CPU backend the next token
// reads pages that are gone (SIGBUS). The server must then exit non-zero with
// a message that names the file (service/server/model_file_guard.h) — never
// answer 200 with content it could not compute, never die of a bare "Bus
// error". The CUDA backend copies the weights to the GPU at load and may go on
// serving; then its answers must be those it gave before the truncation.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/service/serve/serve_process.h"
#include "tests/support/temp_folder.h"

namespace {

using nlohmann::json;
using strata::testing::CommandResult;
using strata::testing::curl;
using strata::testing::ServeProcess;
using namespace std::chrono_literals;

namespace fs = std::filesystem;

// A copy of the tiny serve model in a fresh temporary folder, removed with the object.
class ModelCopy {
 public:
  ModelCopy() { fs::copy_file(strata::testing::tiny_serve_model(), path()); }
  std::string path() const { return folder_.path() + "/model.gguf"; }
  // To half its size: the tiny model's layers and output matrix lie in its
  // second half (after the 2 MiB token embedding), and every token reads them.
  void truncate_to_half() const { fs::resize_file(path(), fs::file_size(path()) / 2); }

 private:
  strata::testing::TempFolder folder_{"strata-model-file"};
};

const std::string kRequest = R"({"prompt": "The river runs", "max_tokens": 8, "temperature": 0})";

// The text of a 200 completion, or nullopt for anything else (an error status,
// a connection the server dropped).
std::optional<std::string> complete(const ServeProcess& server) {
  CommandResult r =
      curl("--max-time 60 -w '\\n%{http_code}' --unix-socket " + server.socket_path() +
           " http://strata/v1/completions -d '" + kRequest + "'");
  const size_t newline = r.output.rfind('\n');
  if (r.exit_code != 0 || newline == std::string::npos || r.output.substr(newline + 1) != "200") {
    return std::nullopt;
  }
  const json body = json::parse(r.output.substr(0, newline), nullptr, false);
  if (body.is_discarded()) return std::nullopt;
  return body["choices"][0]["text"].get<std::string>();
}

std::string changed_message(const ModelCopy& model) {
  return "error: the model file " + model.path() + " changed while it was being served";
}

TEST(ServeModelFileTest, OnTheCpuATruncatedModelEndsTheServerWithAMessage) {
  ModelCopy model;
  ServeProcess server(model.path(), {"--backend", "cpu"});
  ASSERT_TRUE(server.running()) << server.log();
  ASSERT_TRUE(complete(server).has_value()) << server.log();

  model.truncate_to_half();
  const std::optional<std::string> after = complete(server);
  EXPECT_FALSE(after.has_value()) << "answered 200 after the truncation: " << *after;
  EXPECT_EQ(server.wait_exit(30s), 1) << "not a clean exit with code 1\n" << server.log();
  EXPECT_NE(server.log().find(changed_message(model)), std::string::npos) << server.log();
}

TEST(ServeModelFileTest, OnAnyBackendATruncatedModelNeverGivesAnotherAnswer) {
  ModelCopy model;
  ServeProcess server(model.path());
  ASSERT_TRUE(server.running()) << server.log();
  const std::optional<std::string> before = complete(server);
  ASSERT_TRUE(before.has_value()) << server.log();

  model.truncate_to_half();
  for (int i = 0; i < 3 && server.running(); ++i) {
    if (const std::optional<std::string> after = complete(server)) {
      EXPECT_EQ(*after, *before) << "the answer changed after the truncation";
    }
  }
  if (server.running()) {
    // Weights copied at load (CUDA): the truncation was harmless.
    std::printf("the server still serves after the truncation, with the same answers\n");
    EXPECT_EQ(server.terminate(), 0) << server.log();
    return;
  }
  EXPECT_EQ(server.wait_exit(30s), 1) << server.log();
  EXPECT_NE(server.log().find(changed_message(model)), std::string::npos) << server.log();
}

}  // namespace
