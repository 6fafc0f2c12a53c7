// The endpoints of a real `strata serve`, asked with curl over the Unix
// socket and loopback TCP: health, models, completions (whole and streamed),
// tokenize / detokenize and metrics.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/service/serve/serve_process.h"

namespace {

using nlohmann::json;
using strata::testing::CommandResult;
using strata::testing::curl;
using strata::testing::ServeProcess;

class ServeEndpointsTest : public testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new ServeProcess(strata::testing::tiny_serve_model()); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  // curl over the Unix socket; the body as JSON.
  static json unix_json(const std::string& args) {
    CommandResult r = curl("--unix-socket " + server_->socket_path() + " " + args);
    EXPECT_EQ(r.exit_code, 0) << r.errors;
    return json::parse(r.output);
  }

  static ServeProcess* server_;
};

ServeProcess* ServeEndpointsTest::server_ = nullptr;

TEST_F(ServeEndpointsTest, HealthAndModels) {
  EXPECT_EQ(unix_json("http://strata/health")["status"], "ok");
  json models = unix_json("http://strata/v1/models");
  EXPECT_EQ(models["object"], "list");
  ASSERT_EQ(models["data"].size(), 1u);
  EXPECT_EQ(models["data"][0]["id"], "serve_tiny_llama2");
  EXPECT_EQ(models["data"][0]["object"], "model");
  EXPECT_EQ(models["data"][0]["max_model_len"], 1024);
}

TEST_F(ServeEndpointsTest, ChatCompletionWithUsage) {
  json reply = unix_json(
      R"(http://strata/v1/chat/completions -d '{"model": "serve_tiny_llama2", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}], "max_tokens": 6, "seed": 3}')");
  EXPECT_EQ(reply["object"], "chat.completion");
  EXPECT_EQ(reply["choices"][0]["message"]["role"], "assistant");
  EXPECT_TRUE(reply["choices"][0]["message"]["content"].is_string());
  const json& usage = reply["usage"];
  EXPECT_EQ(usage["completion_tokens"], 6);
  EXPECT_EQ(reply["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(usage["total_tokens"],
            usage["prompt_tokens"].get<int>() + usage["completion_tokens"].get<int>());
}

TEST_F(ServeEndpointsTest, SameSeedSameText) {
  const std::string request =
      R"(http://strata/v1/completions -d '{"prompt": "Once upon", "max_tokens": 8, "seed": 42, "temperature": 1.0}')";
  EXPECT_EQ(unix_json(request)["choices"][0]["text"], unix_json(request)["choices"][0]["text"]);
}

TEST_F(ServeEndpointsTest, RepeatedPromptIsServedFromThePrefixCache) {
  const std::string prompt(400, 'a');
  const std::string request = "http://strata/v1/completions -d '{\"prompt\": \"" + prompt +
                              "\", \"max_tokens\": 1}'";
  unix_json(request);
  json second = unix_json(request);
  EXPECT_GT(second["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), 0);
}

TEST_F(ServeEndpointsTest, StreamEndsWithUsageChunkThenDone) {
  CommandResult r = curl(
      "-N --unix-socket " + server_->socket_path() +
      R"( http://strata/v1/completions -d '{"prompt": "Hi", "max_tokens": 4, "stream": true, "stream_options": {"include_usage": true}}')");
  ASSERT_EQ(r.exit_code, 0) << r.errors;
  std::vector<json> chunks;
  size_t start = 0;
  std::string last;
  while (start < r.output.size()) {
    const size_t end = r.output.find("\n\n", start);
    ASSERT_NE(end, std::string::npos) << "unterminated event: " << r.output.substr(start);
    const std::string event = r.output.substr(start, end - start);
    ASSERT_EQ(event.rfind("data: ", 0), 0u) << event;
    last = event.substr(6);
    if (last != "[DONE]") chunks.push_back(json::parse(last));
    start = end + 2;
  }
  EXPECT_EQ(last, "[DONE]");
  ASSERT_GE(chunks.size(), 2u);
  EXPECT_TRUE(chunks.back()["choices"].empty());
  EXPECT_EQ(chunks.back()["usage"]["completion_tokens"], 4);
  EXPECT_EQ(chunks[chunks.size() - 2]["choices"][0]["finish_reason"], "length");
}

TEST_F(ServeEndpointsTest, TokenizeAndDetokenizeRoundTrip) {
  json tokens = unix_json(
      R"(http://strata/v1/tokenize -d '{"prompt": "Hello world", "add_special_tokens": false}')");
  ASSERT_TRUE(tokens["tokens"].is_array());
  EXPECT_EQ(tokens["count"], tokens["tokens"].size());
  json text =
      unix_json("http://strata/v1/detokenize -d '{\"tokens\": " + tokens["tokens"].dump() + "}'");
  EXPECT_EQ(text["prompt"], "Hello world");
}

TEST_F(ServeEndpointsTest, TcpNeedsNoKeyAndAcceptsAnyBearer) {
  CommandResult r =
      curl("-H 'Authorization: Bearer sk-anything' " + server_->base_url() + "/v1/models");
  ASSERT_EQ(r.exit_code, 0) << r.errors;
  EXPECT_EQ(json::parse(r.output)["data"][0]["id"], "serve_tiny_llama2");
}

TEST_F(ServeEndpointsTest, MetricsCountRequestsAndTokens) {
  unix_json(R"(http://strata/v1/completions -d '{"prompt": "count me", "max_tokens": 2}')");
  CommandResult r = curl("--unix-socket " + server_->socket_path() + " http://strata/metrics");
  ASSERT_EQ(r.exit_code, 0) << r.errors;
  EXPECT_NE(
      r.output.find("strata_http_requests_total{endpoint=\"/v1/completions\",status=\"200\"}"),
      std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("strata_generation_tokens_total"), std::string::npos);
  EXPECT_NE(r.output.find("strata_kv_blocks_total{tier="), std::string::npos);
  EXPECT_NE(r.output.find("strata_time_to_first_token_seconds_count"), std::string::npos);
}

}  // namespace
