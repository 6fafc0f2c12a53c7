// `strata dev render-chat` end to end: the prompt text it prints for a chat request is the
// text Python's Jinja2 renders (tools/chat/render_reference.py, set up as transformers'
// apply_chat_template) from the same template and the messages as the server hands them
// to the template — tool-call arguments decoded, content parts joined. Bad input gives an
// error on standard error, exit code 1 and nothing on standard output.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/strata_command.h"
#include "tests/support/temp_folder.h"

namespace {

using nlohmann::ordered_json;
using strata::testing::CommandResult;
using strata::testing::run_shell;
using strata::testing::run_strata;
using strata::testing::run_strata_dev;

const std::string kTemplates = std::string(STRATA_SOURCE_DIR) + "/tests/data/chat_templates/";

// One chat request and what its template must see.
struct RenderCase {
  std::string name;
  std::string model;          // "qwen3": its own template is qwen3.jinja; "llama3"
  std::string template_file;  // given with --template; "": the model's own
  ordered_json request;       // the --messages file: a body, or a messages array
  ordered_json tools;         // the --tools file; null: none given
  ordered_json kwargs;        // the --kwargs file; null: none given
  ordered_json reference;     // messages, tools, kwargs as render_reference.py reads them
  bool generation_prompt = true;
};

ordered_json weather_tools() {
  return ordered_json::parse(R"([{"type": "function", "function": {
      "name": "get_weather", "description": "Current weather in a city",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                     "required": ["city"]}}}])");
}

std::vector<RenderCase> render_cases() {
  std::vector<RenderCase> cases;
  // A whole request body; the call's arguments arrive as a JSON string, as OpenAI sends
  // them, and reach the template as an object; missing assistant content reads as "".
  ordered_json body = {{"model", "any"},
                       {"messages", ordered_json::parse(R"([
          {"role": "system", "content": "You are terse."},
          {"role": "user", "content": "Weather in Paris?"},
          {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
              "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
          {"role": "tool", "tool_call_id": "call_1", "content": "18 C, sunny"}])")},
                       {"tools", weather_tools()}};
  ordered_json seen = ordered_json::parse(R"([
      {"role": "system", "content": "You are terse."},
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
          "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
      {"role": "tool", "content": "18 C, sunny", "tool_call_id": "call_1"}])");
  cases.push_back(
      {.name = "qwen3_tools",
       .model = "qwen3",
       .template_file = "",
       .request = body,
       .tools = nullptr,
       .kwargs = nullptr,
       .reference = {
           {"messages", seen}, {"tools", weather_tools()}, {"kwargs", ordered_json::object()}}});

  // A messages array with content parts, and chat_template_kwargs from --kwargs.
  cases.push_back(
      {.name = "qwen3_no_thinking",
       .model = "qwen3",
       .template_file = "",
       .request = ordered_json::parse(R"([{"role": "user", "content": [
           {"type": "text", "text": "Hello"}, {"type": "text", "text": "world"}]}])"),
       .tools = nullptr,
       .kwargs = {{"enable_thinking", false}},
       .reference = {
           {"messages", ordered_json::parse(R"([{"role": "user", "content": "Hello\nworld"}])")},
           {"tools", nullptr},
           {"kwargs", {{"enable_thinking", false}}}}});

  const ordered_json turns = ordered_json::parse(R"([
      {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}])");
  cases.push_back(
      {.name = "qwen3_no_generation_prompt",
       .model = "qwen3",
       .template_file = "",
       .request = turns,
       .tools = nullptr,
       .kwargs = nullptr,
       .reference = {{"messages", turns}, {"tools", nullptr}, {"kwargs", ordered_json::object()}},
       .generation_prompt = false});

  const ordered_json question = ordered_json::parse(R"([
      {"role": "system", "content": "Answer briefly."},
      {"role": "user", "content": "Is it warm in Rome?"}])");
  cases.push_back({.name = "llama3.3_tools",
                   .model = "llama3",
                   .template_file = "llama3.3.jinja",
                   .request = question,
                   .tools = weather_tools(),
                   .kwargs = nullptr,
                   .reference = {{"messages", question},
                                 {"tools", weather_tools()},
                                 {"kwargs", ordered_json::object()}}});

  const ordered_json chat = ordered_json::parse(R"([
      {"role": "user", "content": "  Hi  "}, {"role": "assistant", "content": "Hello."},
      {"role": "user", "content": "Bye"}])");
  cases.push_back(
      {.name = "llama3",
       .model = "llama3",
       .template_file = "llama3.jinja",
       .request = chat,
       .tools = nullptr,
       .kwargs = nullptr,
       .reference = {{"messages", chat}, {"tools", nullptr}, {"kwargs", ordered_json::object()}}});
  return cases;
}

class RenderChatCommandTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    models_ = new std::map<std::string, std::string>();
    make_model("qwen3",
               "--arch qwen3 --tokenizer qwen3 --chat-template " + kTemplates + "qwen3.jinja");
    make_model("llama3", "--arch llama --tokenizer llama3");
  }
  static void TearDownTestSuite() {
    delete models_;
    models_ = nullptr;
  }

  static void make_model(const std::string& name, const std::string& args) {
    const std::string path = strata::testing::test_model_path("render_chat_" + name + ".gguf");
    CommandResult made = run_strata_dev("make-model " + args +
                                        " --hidden 64 --layers 1 --heads 2 --kv-heads 1"
                                        " --ffn 128 --ctx 256 --type q8_0 --seed 3 -o " +
                                        path);
    ASSERT_EQ(made.exit_code, 0) << made.errors;
    (*models_)[name] = path;
  }

  std::string write(const std::string& name, const std::string& text) {
    const std::string path = folder_.path() + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  // The model's bos and eos text, as the template sees them.
  std::pair<std::string, std::string> special_tokens(const std::string& model) {
    const std::string probe = write("probe.jinja", "{{ bos_token }}\n{{ eos_token }}");
    const std::string messages = write("probe.json", R"([{"role": "user", "content": "x"}])");
    CommandResult r =
        run_strata("dev render-chat " + model + " --messages " + messages + " --template " + probe);
    EXPECT_EQ(r.exit_code, 0) << r.errors;
    const size_t newline = r.output.find('\n');
    if (newline == std::string::npos) return {};
    return {r.output.substr(0, newline), r.output.substr(newline + 1)};
  }

  CommandResult render(const RenderCase& c) {
    std::string args =
        (*models_)[c.model] + " --messages " + write(c.name + ".json", c.request.dump());
    if (!c.tools.is_null()) args += " --tools " + write(c.name + ".tools.json", c.tools.dump());
    if (!c.kwargs.is_null()) {
      args += " --kwargs " + write(c.name + ".kwargs.json", c.kwargs.dump());
    }
    if (!c.template_file.empty()) args += " --template " + kTemplates + c.template_file;
    if (!c.generation_prompt) args += " --no-generation-prompt";
    return run_strata("dev render-chat " + args);
  }

  const std::string& model(const std::string& name) { return (*models_)[name]; }

  strata::testing::TempFolder folder_{"render-chat-test"};
  static std::map<std::string, std::string>* models_;  // name -> GGUF path
};

std::map<std::string, std::string>* RenderChatCommandTest::models_ = nullptr;

TEST_F(RenderChatCommandTest, PrintsWhatJinja2Renders) {
  if (run_shell("python3 -c 'import jinja2'").exit_code != 0) {
    GTEST_SKIP() << "python3 with jinja2 is needed for the reference renders";
  }
  const std::vector<RenderCase> cases = render_cases();
  ordered_json templates = ordered_json::array();
  ordered_json conversations = ordered_json::array();
  for (const RenderCase& c : cases) {
    const auto [bos, eos] = special_tokens(model(c.model));
    const std::string file = c.template_file.empty() ? "qwen3.jinja" : c.template_file;
    templates.push_back(
        {{"name", c.name}, {"file", kTemplates + file}, {"bos_token", bos}, {"eos_token", eos}});
    conversations.push_back({{"name", c.name},
                             {"messages", c.reference["messages"]},
                             {"tools", c.reference["tools"]},
                             {"kwargs", c.reference["kwargs"]},
                             {"add_generation_prompt", c.generation_prompt}});
  }
  const std::string expected_path = folder_.path() + "/expected.json";
  CommandResult reference = run_shell(
      "python3 " + std::string(STRATA_SOURCE_DIR) + "/tools/chat/render_reference.py" +
      " --templates " + write("templates.json", ordered_json{{"templates", templates}}.dump()) +
      " --conversations " +
      write("conversations.json", ordered_json{{"conversations", conversations}}.dump()) +
      " --out " + expected_path);
  ASSERT_EQ(reference.exit_code, 0) << reference.errors;

  std::map<std::string, std::string> expected;
  const ordered_json rendered = ordered_json::parse(strata::testing::read_file(expected_path));
  for (const auto& result : rendered["results"]) {
    if (result["template"] == result["conversation"]) {
      ASSERT_TRUE(result.contains("output")) << result.dump();
      expected[result["template"]] = result["output"];
    }
  }
  for (const RenderCase& c : cases) {
    SCOPED_TRACE(c.name);
    CommandResult r = render(c);
    ASSERT_EQ(r.exit_code, 0) << r.errors;
    ASSERT_EQ(expected.count(c.name), 1u);
    EXPECT_EQ(r.output, expected[c.name]);
  }
}

TEST_F(RenderChatCommandTest, ModelTokensReachTheTemplate) {
  EXPECT_EQ(special_tokens(model("qwen3")).second, "<|im_end|>");
  EXPECT_EQ(special_tokens(model("llama3")).first, "<|begin_of_text|>");
}

// Every error: exit code 1, a message on standard error, nothing on standard output.
void expect_error(const CommandResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 1) << r.errors;
  EXPECT_EQ(r.output, "");
  EXPECT_NE(r.errors.find(message), std::string::npos) << r.errors;
}

TEST_F(RenderChatCommandTest, BadInputGivesClearErrors) {
  const std::string hello = write("hello.json", R"([{"role": "user", "content": "Hi"}])");
  const std::string& qwen3 = model("qwen3");

  expect_error(run_strata("dev render-chat " + qwen3 + " --messages /nonexistent/m.json"),
               "/nonexistent/m.json");
  expect_error(
      run_strata("dev render-chat " + qwen3 + " --messages " + write("bad.json", "[{\"role\": ")),
      "not JSON");
  expect_error(run_strata("dev render-chat " + qwen3 + " --messages " + write("number.json", "42")),
               "expected a messages array or a request object");
  expect_error(run_strata("dev render-chat " + qwen3 + " --messages " +
                          write("role.json", R"([{"role": "wizard", "content": "Hi"}])")),
               "messages.[0].role");
  expect_error(run_strata("dev render-chat " + qwen3 + " --messages " + hello + " --tools " +
                          write("tools.json", R"([{"type": "function"}])")),
               "tools.[0]");
  expect_error(run_strata("dev render-chat /nonexistent/model.gguf --messages " + hello),
               "/nonexistent/model.gguf");

  // The template's own raise_exception message.
  expect_error(
      run_strata("dev render-chat " + qwen3 + " --messages " +
                 write("assistant_first.json", R"([{"role": "assistant", "content": "Hi"}])") +
                 " --template " + kTemplates + "llama2.jinja"),
      "Conversation roles must alternate user/assistant/user/assistant/...");
  // A template the engine cannot parse names its line.
  expect_error(run_strata("dev render-chat " + qwen3 + " --messages " + hello + " --template " +
                          write("broken.jinja", "Hello\n{% for m in messages %}")),
               "line 2");
  expect_error(run_strata("dev render-chat " + qwen3 + " --messages " + hello +
                          " --template /nonexistent/t.jinja"),
               "/nonexistent/t.jinja");

  CommandResult no_messages = run_strata("dev render-chat " + qwen3);
  EXPECT_NE(no_messages.exit_code, 0);
  EXPECT_NE(no_messages.errors.find("--messages"), std::string::npos) << no_messages.errors;
}

}  // namespace
