// The chat page in a real browser: Debian's Chromium driven by playwright-core
// (web_ui_check.mjs, one scenario per run) against real `strata serve` processes.
// Screenshots go to BUILD/web-screenshots/ for review.
//
// Needs /usr/bin/chromium and tools/node's packages (scripts/install-deps).
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "tests/service/serve/serve_process.h"

namespace {

using strata::testing::CommandResult;
using strata::testing::run_shell;
using strata::testing::ServeProcess;

const std::string kScript = std::string(STRATA_SOURCE_DIR) + "/tests/web/web_ui_check.mjs";
const std::string kScreenshots = std::string(STRATA_BINARY_DIR) + "/web-screenshots";

// A model slow enough to stop mid-reply: a few hundred tokens a second on a CPU,
// with room for thousands of them, where the tiny model is done in a blink.
std::string slow_model() {
  const std::string path = strata::testing::test_model_path("web_ui_slow_llama2.gguf");
  if (!std::filesystem::exists(path)) {
    const std::string temp = path + ".tmp";
    CommandResult made = strata::testing::run_strata_dev(
        "make-model --tokenizer llama2 --hidden 256 --layers 6 --heads 4 --kv-heads 2 "
        "--ffn 768 --ctx 8192 --type q8_0 --seed 5 -o " +
        temp);
    if (made.exit_code != 0) throw std::runtime_error("make-model failed: " + made.errors);
    std::filesystem::rename(temp, path);
  }
  return path;
}

class WebUiBrowserTest : public testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new ServeProcess(strata::testing::tiny_serve_model()); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists("/usr/bin/chromium"))
        << "Debian's chromium is missing: run scripts/install-deps";
    ASSERT_TRUE(std::filesystem::exists(std::string(STRATA_SOURCE_DIR) +
                                        "/tools/node/node_modules/playwright-core/package.json"))
        << "playwright-core is missing: run scripts/install-deps (npm ci in tools/node)";
  }

  // Runs one scenario of web_ui_check.mjs against `server`; expects it to pass.
  static void run_scenario(const std::string& scenario, ServeProcess& server) {
    ASSERT_GT(server.port(), 0) << server.log();
    CommandResult r = run_shell("node " + kScript + " " + server.base_url() + " " + scenario + " " +
                                kScreenshots + " 2>&1");
    EXPECT_EQ(r.exit_code, 0) << r.output << "\nserver log:\n" << server.log();
    EXPECT_NE(r.output.find("PASS " + scenario), std::string::npos) << r.output;
  }

  static ServeProcess* server_;
};

ServeProcess* WebUiBrowserTest::server_ = nullptr;

TEST_F(WebUiBrowserTest, SendsAMessageAndStreamsTheReply) { run_scenario("chat", *server_); }

TEST_F(WebUiBrowserTest, ConversationsSurviveAReload) { run_scenario("reload", *server_); }

TEST_F(WebUiBrowserTest, HtmlInAReplyShowsAsTextAndRunsNothing) { run_scenario("xss", *server_); }

// The reply comes from a scripted stream: a random test model neither thinks nor calls tools.
TEST_F(WebUiBrowserTest, ShowsThinkingAndToolCallsApartFromTheAnswer) {
  run_scenario("tool_calls", *server_);
}

TEST_F(WebUiBrowserTest, ContentSecurityPolicyBlocksInjectedScript) {
  run_scenario("csp", *server_);
}

TEST_F(WebUiBrowserTest, StopCancelsTheGenerationOnTheServer) {
  ServeProcess slow(slow_model());
  run_scenario("stop", slow);
}

TEST_F(WebUiBrowserTest, AsksForTheApiKeyWhenTheServerNeedsOne) {
  ServeProcess keyed(strata::testing::tiny_serve_model(), {"--api-key", "web-ui-test-key"});
  run_scenario("api_key", keyed);
}

TEST_F(WebUiBrowserTest, ScreenshotsLightDarkAndNarrow) {
  run_scenario("screenshots", *server_);
  for (const char* name : {"light", "dark", "narrow"}) {
    EXPECT_GT(std::filesystem::file_size(kScreenshots + "/" + name + ".png"), 10'000u) << name;
  }
}

}  // namespace
