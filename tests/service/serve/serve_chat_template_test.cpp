// `strata serve --chat-template FILE`: the file replaces the model's own chat template, so
// a chat request's prompt tokens are those of the text the file renders; a template the
// engine cannot run, or a file that is not there, stops the server at start-up with a
// message that says which and where.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/service/serve/serve_process.h"
#include "tests/support/temp_folder.h"

namespace {

using nlohmann::json;
using strata::testing::CommandResult;
using strata::testing::curl;
using strata::testing::ServeProcess;
using namespace std::chrono_literals;

// Plain text only: the prompt tokens are then those of encoding the text as a prompt.
constexpr const char* kTemplate =
    "{% for m in messages %}<<{{ m.role }}>> {{ m.content | trim }}\n{% endfor %}"
    "{% if add_generation_prompt %}<<assistant>>{% endif %}";

class ServeChatTemplateTest : public testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = folder_.path() + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  static json post(const ServeProcess& server, const std::string& path, const json& body) {
    CommandResult r = curl("--unix-socket " + server.socket_path() + " http://strata" + path +
                           " -d '" + body.dump() + "'");
    EXPECT_EQ(r.exit_code, 0) << r.errors;
    return json::parse(r.output, nullptr, false);
  }

  strata::testing::TempFolder folder_{"serve-chat-template"};
};

TEST_F(ServeChatTemplateTest, FileReplacesTheModelsTemplate) {
  const json messages = json::parse(R"([{"role": "system", "content": "Be brief. "},
                                        {"role": "user", "content": "The river runs"}])");
  ServeProcess server(strata::testing::tiny_chat_model("qwen3"),
                      {"--chat-template", write("plain.jinja", kTemplate)});

  const json chat_tokens = post(server, "/v1/tokenize", {{"messages", messages}});
  const json text_tokens =
      post(server, "/v1/tokenize",
           {{"prompt", "<<system>> Be brief.\n<<user>> The river runs\n<<assistant>>"},
            {"add_special_tokens", false}});
  ASSERT_TRUE(chat_tokens.contains("tokens")) << chat_tokens.dump();
  EXPECT_EQ(chat_tokens["tokens"], text_tokens["tokens"]);

  const json reply = post(server, "/v1/chat/completions",
                          {{"messages", messages}, {"max_tokens", 1}, {"temperature", 0}});
  ASSERT_TRUE(reply.contains("usage")) << reply.dump();
  EXPECT_EQ(reply["usage"]["prompt_tokens"], chat_tokens["tokens"].size());

  // The model's own template (Qwen3's ChatML) marks turns with <|im_start|>; this one
  // does not, so none of its special tokens are in the prompt.
  ServeProcess own(strata::testing::tiny_chat_model("qwen3"));
  const json own_tokens = post(own, "/v1/tokenize", {{"messages", messages}});
  EXPECT_NE(own_tokens["tokens"], chat_tokens["tokens"]);
}

TEST_F(ServeChatTemplateTest, TemplateThatCannotRunStopsTheServer) {
  ServeProcess server(strata::testing::tiny_serve_model(),
                      {"--chat-template", write("broken.jinja", "Hello\n{{ messages | nosuch }}")},
                      {}, /*wait_ready=*/false);
  EXPECT_EQ(server.wait_exit(60s), 1) << server.log();
  EXPECT_NE(server.log().find("the chat template given cannot be run"), std::string::npos)
      << server.log();
  EXPECT_NE(server.log().find("line 2"), std::string::npos) << server.log();
}

TEST_F(ServeChatTemplateTest, MissingFileStopsTheServer) {
  const std::string missing = folder_.path() + "/none.jinja";
  ServeProcess server(strata::testing::tiny_serve_model(), {"--chat-template", missing}, {},
                      /*wait_ready=*/false);
  EXPECT_NE(server.wait_exit(60s), 0) << server.log();
  EXPECT_NE(server.log().find("--chat-template: cannot read '" + missing + "'"), std::string::npos)
      << server.log();
}

}  // namespace
