// detect_reply_format on the real chat templates of the parity suite
// (tests/data/chat_templates/parity_templates.json): each family the reply parser knows
// is recognised from its published template, and templates without tools or reasoning
// get neither.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "model/chat/reply/reply_format.h"

namespace strata {
namespace {

const std::string kTemplates = std::string(STRATA_SOURCE_DIR) + "/tests/data/chat_templates/";

struct Expected {
  ToolCallSyntax tool_calls;
  ReasoningSyntax reasoning;
  bool opens_think = false;
};

// The templates whose markup the parser implements, and templates with neither tools nor
// reasoning. (Families with markup of their own — GLM, Command-R, Kimi, MiniMax, Seed,
// Functionary — are not listed: their calls stay content.)
const std::map<std::string, Expected> kExpected = {
    {"llama3", {ToolCallSyntax::kNone, ReasoningSyntax::kNone}},
    {"llama3.2", {ToolCallSyntax::kLlama3, ReasoningSyntax::kNone}},
    {"llama3.3", {ToolCallSyntax::kLlama3, ReasoningSyntax::kNone}},
    {"llama2", {ToolCallSyntax::kNone, ReasoningSyntax::kNone}},
    {"hermes3-tool-use", {ToolCallSyntax::kHermes, ReasoningSyntax::kNone}},
    {"chatml", {ToolCallSyntax::kNone, ReasoningSyntax::kNone}},
    {"qwen2.5", {ToolCallSyntax::kHermes, ReasoningSyntax::kNone}},
    {"qwen3", {ToolCallSyntax::kHermes, ReasoningSyntax::kThinkTags}},
    {"qwen3-coder", {ToolCallSyntax::kQwen3Coder, ReasoningSyntax::kNone}},
    {"qwq-32b", {ToolCallSyntax::kHermes, ReasoningSyntax::kThinkTags, true}},
    {"mistral", {ToolCallSyntax::kMistral, ReasoningSyntax::kNone}},
    {"mistral-nemo", {ToolCallSyntax::kMistral, ReasoningSyntax::kNone}},
    {"mistral-small-3.1", {ToolCallSyntax::kMistral, ReasoningSyntax::kNone}},
    {"gpt-oss", {ToolCallSyntax::kGptOss, ReasoningSyntax::kGptOssChannels}},
    {"deepseek-v3", {ToolCallSyntax::kDeepSeekV3, ReasoningSyntax::kNone}},
    {"deepseek-v3.1", {ToolCallSyntax::kDeepSeekV31, ReasoningSyntax::kThinkTags, true}},
    {"deepseek-r1-distill-qwen", {ToolCallSyntax::kDeepSeekV3, ReasoningSyntax::kThinkTags, true}},
    {"gemma2", {ToolCallSyntax::kNone, ReasoningSyntax::kNone}},
    {"gemma3", {ToolCallSyntax::kNone, ReasoningSyntax::kNone}},
    {"phi3.5-mini", {ToolCallSyntax::kNone, ReasoningSyntax::kNone}},
    {"internlm2", {ToolCallSyntax::kNone, ReasoningSyntax::kNone}},
    {"chatglm3", {ToolCallSyntax::kNone, ReasoningSyntax::kNone}},
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ReplyFormatTemplatesTest, RealTemplatesAreRecognised) {
  const nlohmann::json list =
      nlohmann::json::parse(read_file(kTemplates + "parity_templates.json"));
  size_t checked = 0;
  for (const nlohmann::json& entry : list["templates"]) {
    const std::string name = entry["name"].get<std::string>();
    const auto expected = kExpected.find(name);
    if (expected == kExpected.end()) continue;
    const std::string source = read_file(kTemplates + entry["file"].get<std::string>());
    ASSERT_FALSE(source.empty()) << name;
    const ReplyFormat format = detect_reply_format(source);
    EXPECT_EQ(tool_call_syntax_name(format.tool_calls),
              tool_call_syntax_name(expected->second.tool_calls))
        << name;
    EXPECT_EQ(reasoning_syntax_name(format.reasoning),
              reasoning_syntax_name(expected->second.reasoning))
        << name;
    EXPECT_EQ(format.generation_prompt_opens_think, expected->second.opens_think) << name;
    ++checked;
  }
  EXPECT_EQ(checked, kExpected.size()) << "a template of the table is missing from the suite";
}

}  // namespace
}  // namespace strata
