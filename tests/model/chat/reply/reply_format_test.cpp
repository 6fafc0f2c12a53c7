#include "model/chat/reply/reply_format.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace strata {
namespace {

std::string read_file(const std::string& relative_path) {
  const std::string path = std::string(STRATA_SOURCE_DIR) + "/" + relative_path;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

ReplyFormat detect_file(const std::string& relative_path) {
  return detect_reply_format(read_file(relative_path));
}

TEST(ReplyFormatTest, Names) {
  EXPECT_EQ(tool_call_syntax_name(ToolCallSyntax::kHermes), "hermes");
  EXPECT_EQ(tool_call_syntax_name(ToolCallSyntax::kDeepSeekV31), "deepseek-v3.1");
  EXPECT_EQ(tool_call_syntax_name(ToolCallSyntax::kGenericJson), "generic-json");
  EXPECT_EQ(reasoning_syntax_name(ReasoningSyntax::kThinkTags), "think-tags");
  EXPECT_EQ(reasoning_syntax_name(ReasoningSyntax::kGptOssChannels), "gpt-oss-channels");
}

TEST(ReplyFormatTest, Qwen3IsHermesWithThinkTagsItOpensItself) {
  const ReplyFormat format = detect_file("tests/data/chat_templates/qwen3.jinja");
  EXPECT_EQ(format.tool_calls, ToolCallSyntax::kHermes);
  EXPECT_EQ(format.reasoning, ReasoningSyntax::kThinkTags);
  // enable_thinking=false closes an empty block; with thinking the model writes <think>.
  EXPECT_FALSE(format.generation_prompt_opens_think);
}

TEST(ReplyFormatTest, TemplatesWithoutToolsHaveNoCallSyntax) {
  for (const char* file : {"chatml.jinja", "llama2.jinja", "llama3.jinja"}) {
    const ReplyFormat format = detect_file(std::string("tests/data/chat_templates/") + file);
    EXPECT_EQ(format.tool_calls, ToolCallSyntax::kNone) << file;
    EXPECT_EQ(format.reasoning, ReasoningSyntax::kNone) << file;
  }
  EXPECT_EQ(detect_reply_format("").tool_calls, ToolCallSyntax::kNone);
}

TEST(ReplyFormatTest, MistralV3) {
  const ReplyFormat format = detect_file("tests/data/chat_templates/mistral.jinja");
  EXPECT_EQ(format.tool_calls, ToolCallSyntax::kMistral);
  EXPECT_EQ(format.reasoning, ReasoningSyntax::kNone);
}

TEST(ReplyFormatTest, DeepSeekR1DistillOpensThinkInItsGenerationPrompt) {
  const ReplyFormat format =
      detect_file("tests/data/chat_templates/deepseek-r1-distill-qwen.jinja");
  EXPECT_EQ(format.tool_calls, ToolCallSyntax::kDeepSeekV3);
  EXPECT_EQ(format.reasoning, ReasoningSyntax::kThinkTags);
  EXPECT_TRUE(format.generation_prompt_opens_think);
}

TEST(ReplyFormatTest, DeepSeekV31WritesArgumentsWithoutFence) {
  const ReplyFormat format = detect_file("tests/data/chat_templates/deepseek-v3.1.jinja");
  EXPECT_EQ(format.tool_calls, ToolCallSyntax::kDeepSeekV31);
  EXPECT_EQ(format.reasoning, ReasoningSyntax::kThinkTags);
  // With thinking on, the generation prompt ends in <think>.
  EXPECT_TRUE(format.generation_prompt_opens_think);
}

TEST(ReplyFormatTest, MarkersOfTheOtherFamilies) {
  // The distinctive lines of each family's template.
  EXPECT_EQ(detect_reply_format("{{- '<|start|>assistant<|channel|>final<|message|>' }}").tool_calls,
            ToolCallSyntax::kGptOss);
  EXPECT_EQ(detect_reply_format("{{- '<|start|>assistant<|channel|>final<|message|>' }}").reasoning,
            ReasoningSyntax::kGptOssChannels);
  EXPECT_EQ(detect_reply_format("{{- '<tool_call>\\n<function=' + tool_call.name + '>\\n' }}"
                                "{{- '<parameter=' + args_name + '>\\n' }}")
                .tool_calls,
            ToolCallSyntax::kQwen3Coder);
  EXPECT_EQ(detect_reply_format("{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
                                "{{- '<|python_tag|>' + tool_call.name + '.call(' }}")
                .tool_calls,
            ToolCallSyntax::kLlama3);
  EXPECT_EQ(detect_reply_format("{{- '[TOOL_CALLS]' + tool.name + '[ARGS]' }}").tool_calls,
            ToolCallSyntax::kMistral);
  EXPECT_EQ(detect_reply_format("{% if tools %}{{ tools | tojson }}{% endif %}").tool_calls,
            ToolCallSyntax::kGenericJson);
}

TEST(ReplyFormatTest, ThinkingTemplateWhoseGenerationPromptOpensThink) {
  // Qwen3 thinking-only models (e.g. Qwen3-*-Thinking-2507) end the prompt inside <think>.
  const ReplyFormat format = detect_reply_format(
      "{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n<think>\\n' }}\n"
      "{%- endif %}");
  EXPECT_EQ(format.reasoning, ReasoningSyntax::kThinkTags);
  EXPECT_TRUE(format.generation_prompt_opens_think);
}

}  // namespace
}  // namespace strata
