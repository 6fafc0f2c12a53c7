// The official `openai` npm package against a real `strata serve` over loopback
// TCP: models, chat and legacy completions (whole and streamed, with usage),
// logprobs, and the SDK's error classes for a 404 and a 400. The client side is
// tools/node/openai_client_check.mjs, which prints one JSON summary; this test
// starts the server, runs it, and reads the summary.
//
// Needs node and the npm packages of tools/node (scripts/install-deps).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/service/serve/node_client.h"
#include "tests/service/serve/serve_process.h"

namespace {

using nlohmann::json;
using strata::testing::ServeProcess;

TEST(ServeOpenAiClientTest, OfficialNodeSdkWorksAgainstTheServer) {
  if (!strata::testing::node_package_installed("openai")) {
    GTEST_SKIP() << "node or the openai npm package is missing: run scripts/install-deps";
  }

  ServeProcess server(strata::testing::tiny_serve_model());
  ASSERT_GT(server.port(), 0) << server.log();

  strata::testing::NodeCheck r =
      strata::testing::run_node_check("openai_client_check.mjs", server.base_url());
  json& summary = r.summary;
  ASSERT_TRUE(summary.is_object()) << "no JSON summary\nstdout:\n"
                                   << r.output << "\nstderr:\n" << r.errors;
  EXPECT_EQ(r.exit_code, 0) << "failures: " << summary["failures"].dump(2) << "\nstderr:\n"
                            << r.errors << "\nserver log:\n" << server.log();
  EXPECT_TRUE(summary["failures"].empty()) << summary["failures"].dump(2);

  // What the SDK handed the application.
  ASSERT_EQ(summary["models"], json::array({"serve_tiny_llama2"})) << summary.dump(2);

  json& chat = summary["chat"];
  ASSERT_TRUE(chat.is_object()) << summary.dump(2);
  EXPECT_TRUE(chat["content"].is_string());
  EXPECT_EQ(chat["usage"]["completion_tokens"].get<int>() == 8, chat["finish_reason"] == "length")
      << chat.dump();
  EXPECT_TRUE(chat["usage"]["prompt_tokens_details"]["cached_tokens"].is_number_integer());

  json& chat_stream = summary["chat_stream"];
  ASSERT_TRUE(chat_stream.is_object()) << summary.dump(2);
  EXPECT_GE(chat_stream["chunks"].get<int>(), 3);
  EXPECT_LE(chat_stream["usage"]["completion_tokens"].get<int>(), 12);
  EXPECT_TRUE(chat_stream["finish_reason"] == "length" || chat_stream["finish_reason"] == "stop");

  for (const char* name : {"completion", "completion_stream"}) {
    json& completion = summary[name];
    ASSERT_TRUE(completion.is_object()) << name << ": " << summary.dump(2);
    EXPECT_TRUE(completion["text"].is_string()) << name;
    EXPECT_LE(completion["usage"]["completion_tokens"].get<int>(), 6) << name;
  }
  // Same seed, same prompt: the stream and the whole reply agree.
  EXPECT_EQ(summary["completion"]["text"], summary["completion_stream"]["text"]);

  ASSERT_TRUE(summary["logprobs"].is_object()) << summary.dump(2);
  EXPECT_EQ(summary["logprobs"]["top"], 3);
  EXPECT_GE(summary["logprobs"]["entries"].get<int>(), 1);

  json& unknown = summary["unknown_model"];
  ASSERT_TRUE(unknown.is_object()) << summary.dump(2);
  EXPECT_EQ(unknown["class"], "NotFoundError");
  EXPECT_EQ(unknown["status"], 404);
  EXPECT_EQ(unknown["code"], "model_not_found");

  for (const char* name : {"bad_temperature", "bad_temperature_stream"}) {
    json& bad = summary[name];
    ASSERT_TRUE(bad.is_object()) << name << ": " << summary.dump(2);
    EXPECT_EQ(bad["class"], "BadRequestError") << name;
    EXPECT_EQ(bad["status"], 400) << name;
    EXPECT_EQ(bad["param"], "temperature") << name;
    EXPECT_EQ(bad["type"], "invalid_request_error") << name;
  }
  EXPECT_EQ(server.terminate(), 0) << server.log();
}

}  // namespace
