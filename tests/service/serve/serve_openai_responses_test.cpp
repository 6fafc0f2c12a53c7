// The official `openai` npm package's Responses API against a real `strata serve`, over
// loopback TCP and over the Unix socket: responses.create, responses.stream (events
// numbered in order, deltas adding up to output_text, greedy stream equal to the whole
// reply), a function_call / function_call_output round trip with a function tool, and
// the SDK's errors for stored state (previous_response_id) and an unknown model. The
// client side is tools/node/openai_responses_check.mjs, which prints one JSON summary.
//
// Needs node and the npm packages of tools/node (scripts/install-deps).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/service/serve/node_client.h"
#include "tests/service/serve/serve_process.h"

namespace {

using nlohmann::json;
using strata::testing::NodeCheck;
using strata::testing::ServeProcess;

void check_summary(const NodeCheck& r, const ServeProcess& server, const std::string& where) {
  const json& summary = r.summary;
  ASSERT_TRUE(summary.is_object()) << where << ": no JSON summary\nstdout:\n"
                                   << r.output << "\nstderr:\n" << r.errors;
  EXPECT_EQ(r.exit_code, 0) << where << ": " << summary["failures"].dump(2) << "\nstderr:\n"
                            << r.errors << "\nserver log:\n" << server.log();
  EXPECT_TRUE(summary["failures"].empty()) << where << ": " << summary["failures"].dump(2);
  for (const char* name : {"create", "stream", "function_call_round_trip"}) {
    ASSERT_TRUE(summary[name].is_object()) << where << " " << name << ": " << summary.dump(2);
  }
  EXPECT_GE(summary["stream"]["events"].get<int>(), 8) << where;

  const json& stored = summary["previous_response_id"];
  ASSERT_TRUE(stored.is_object()) << where << ": " << summary.dump(2);
  EXPECT_EQ(stored["class"], "BadRequestError") << where;
  EXPECT_EQ(stored["status"], 400) << where;
  EXPECT_EQ(stored["param"], "previous_response_id") << where;

  const json& unknown = summary["unknown_model"];
  ASSERT_TRUE(unknown.is_object()) << where << ": " << summary.dump(2);
  EXPECT_EQ(unknown["class"], "NotFoundError") << where;
  EXPECT_EQ(unknown["code"], "model_not_found") << where;
}

TEST(ServeOpenAiResponsesTest, OfficialNodeSdkWorksOverTcpAndTheUnixSocket) {
  if (!strata::testing::node_package_installed("openai")) {
    GTEST_SKIP() << "node or the openai npm package is missing: run scripts/install-deps";
  }
  ServeProcess server(strata::testing::tiny_chat_model("qwen3"));
  ASSERT_GT(server.port(), 0) << server.log();
  const std::string model = " serve_tiny_qwen3";
  check_summary(
      strata::testing::run_node_check("openai_responses_check.mjs", server.base_url() + model),
      server, "tcp");
  check_summary(strata::testing::run_node_check("openai_responses_check.mjs",
                                                "unix:" + server.socket_path() + model),
                server, "unix socket");
  EXPECT_EQ(server.terminate(), 0) << server.log();
}

}  // namespace
