// The official `@anthropic-ai/sdk` npm package against a real `strata serve`, over
// loopback TCP and over the Unix socket: messages.create, messages.stream (events in
// order, deltas adding up to the final message, greedy stream equal to the whole
// reply), stop_sequences, a tool_use / tool_result round trip, messages.countTokens,
// and the SDK's error classes for a 404 and two 400s. The client side is
// tools/node/anthropic_client_check.mjs, which prints one JSON summary.
//
// The model is a tiny one with Qwen3's tokenizer and chat template, whose template
// renders tools into the prompt: counting a conversation's tokens with its tools gives
// more than without.
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

constexpr const char* kModelName = "serve_tiny_qwen3";

void check_summary(const NodeCheck& r, const ServeProcess& server, const std::string& where) {
  const json& summary = r.summary;
  ASSERT_TRUE(summary.is_object()) << where << ": no JSON summary\nstdout:\n"
                                   << r.output << "\nstderr:\n" << r.errors;
  EXPECT_EQ(r.exit_code, 0) << where << ": " << summary["failures"].dump(2) << "\nstderr:\n"
                            << r.errors << "\nserver log:\n" << server.log();
  EXPECT_TRUE(summary["failures"].empty()) << where << ": " << summary["failures"].dump(2);

  for (const char* name : {"create", "stream"}) {
    ASSERT_TRUE(summary[name].is_object()) << where << " " << name << ": " << summary.dump(2);
    EXPECT_TRUE(summary[name]["text"].is_string()) << where << " " << name;
  }
  EXPECT_GE(summary["stream"]["events"].get<int>(), 5) << where;

  const json& stop = summary["stop_sequence"];
  ASSERT_TRUE(stop.is_object()) << where << ": " << summary.dump(2);
  if (!stop.contains("skipped")) {
    EXPECT_TRUE(stop["stop"].is_string()) << where;
  }

  ASSERT_TRUE(summary["tools_round_trip"].is_object()) << where << ": " << summary.dump(2);

  const json& count = summary["count_tokens"];
  ASSERT_TRUE(count.is_object()) << where << ": " << summary.dump(2);
  EXPECT_GT(count["input_tokens"].get<int>(), 0) << where;
  EXPECT_GT(count["with_tools"].get<int>(), count["without_tools"].get<int>() + 20)
      << where << ": the tool definitions are not in the prompt";

  const json& unknown = summary["unknown_model"];
  ASSERT_TRUE(unknown.is_object()) << where << ": " << summary.dump(2);
  EXPECT_EQ(unknown["class"], "NotFoundError") << where;
  EXPECT_EQ(unknown["status"], 404) << where;
  EXPECT_EQ(unknown["type"], "not_found_error") << where;
  for (const char* name : {"missing_max_tokens", "bad_temperature_stream"}) {
    const json& bad = summary[name];
    ASSERT_TRUE(bad.is_object()) << where << " " << name << ": " << summary.dump(2);
    EXPECT_EQ(bad["class"], "BadRequestError") << where << " " << name;
    EXPECT_EQ(bad["status"], 400) << where << " " << name;
    EXPECT_EQ(bad["type"], "invalid_request_error") << where << " " << name;
  }
}

TEST(ServeAnthropicClientTest, OfficialNodeSdkWorksOverTcpAndTheUnixSocket) {
  if (!strata::testing::node_package_installed("@anthropic-ai/sdk")) {
    GTEST_SKIP() << "node or the @anthropic-ai/sdk npm package is missing: run "
                    "scripts/install-deps";
  }
  ServeProcess server(strata::testing::tiny_chat_model("qwen3"));
  ASSERT_GT(server.port(), 0) << server.log();

  const std::string args = std::string(" ") + kModelName;
  check_summary(strata::testing::run_node_check("anthropic_client_check.mjs",
                                                server.base_url() + args),
                server, "tcp");
  check_summary(strata::testing::run_node_check("anthropic_client_check.mjs",
                                                "unix:" + server.socket_path() + args),
                server, "unix socket");
  EXPECT_EQ(server.terminate(), 0) << server.log();
}

}  // namespace
