// Reply formats: how a chat model family marks reasoning and tool calls in the text it
// generates, recognised from its chat template.
//
// The template (GGUF tokenizer.chat_template) renders earlier tool calls back into the
// prompt in the family's own markup, so the markers it contains name the markup the
// model was trained to write. Pure functions: callable from any thread.
#pragma once

#include <string_view>

namespace strata {

enum class ToolCallSyntax {
  kNone,         // the template knows no tools: every reply is content
  kHermes,       // <tool_call>{"name": ..., "arguments": {...}}</tool_call> (Hermes, Qwen2.5, Qwen3)
  kQwen3Coder,   // <tool_call><function=f><parameter=p>value</parameter></function></tool_call>
  kLlama3,       // {"name": ..., "parameters": {...}} as the whole reply; <|python_tag|> calls
  kMistral,      // [TOOL_CALLS][{...}, ...] (v3) or [TOOL_CALLS]f[ARGS]{...} (Small 3.2, Magistral)
  kGptOss,       // harmony: <|channel|>commentary to=functions.f ... <|message|>{...}<|call|>
  kDeepSeekV3,   // <｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{...}\n```<｜tool▁call▁end｜>
  kDeepSeekV31,  // <｜tool▁call▁begin｜>f<｜tool▁sep｜>{...}<｜tool▁call▁end｜>
  kGenericJson,  // tools but no known markup: {"name": ..., "arguments": ...} or {"tool_calls": [...]}
};

enum class ReasoningSyntax {
  kNone,
  kThinkTags,       // <think>...</think>
  kGptOssChannels,  // harmony: the analysis channel is reasoning, the final channel the answer
};

struct ReplyFormat {
  ToolCallSyntax tool_calls = ToolCallSyntax::kNone;
  ReasoningSyntax reasoning = ReasoningSyntax::kNone;
  // kThinkTags: the template's generation prompt ends with an open "<think>\n" (DeepSeek-R1,
  // Qwen3 thinking-only models), so a reply starts inside reasoning and only writes
  // </think>. Callers that render with such a template pass starts_in_reasoning.
  bool generation_prompt_opens_think = false;
};

// "none", "hermes", "qwen3-coder", "llama3", "mistral", "gpt-oss", "deepseek-v3",
// "deepseek-v3.1", "generic-json".
std::string_view tool_call_syntax_name(ToolCallSyntax syntax);

// "none", "think-tags", "gpt-oss-channels".
std::string_view reasoning_syntax_name(ReasoningSyntax syntax);

// The reply format of the family whose template is `chat_template` (empty when absent).
ReplyFormat detect_reply_format(std::string_view chat_template);

}  // namespace strata
