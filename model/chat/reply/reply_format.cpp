#include "model/chat/reply/reply_format.h"

namespace strata {
namespace {

bool contains(std::string_view text, std::string_view marker) {
  return text.find(marker) != std::string_view::npos;
}

ToolCallSyntax detect_tool_call_syntax(std::string_view chat_template) {
  // Most specific markers first: Qwen3-Coder's templates also contain <tool_call>, and
  // DeepSeek V3 and V3.1 differ only in the ```json fence around the arguments.
  if (contains(chat_template, "<|channel|>")) return ToolCallSyntax::kGptOss;
  if (contains(chat_template, "tool\u2581calls\u2581begin")) {
    return contains(chat_template, "```json") ? ToolCallSyntax::kDeepSeekV3
                                              : ToolCallSyntax::kDeepSeekV31;
  }
  if (contains(chat_template, "<function=") && contains(chat_template, "<parameter=")) {
    return ToolCallSyntax::kQwen3Coder;
  }
  if (contains(chat_template, "<tool_call>")) return ToolCallSyntax::kHermes;
  if (contains(chat_template, "[TOOL_CALLS]")) return ToolCallSyntax::kMistral;
  if (contains(chat_template, "<|start_header_id|>") &&
      (contains(chat_template, "<|python_tag|>") || contains(chat_template, "tool_call"))) {
    return ToolCallSyntax::kLlama3;
  }
  if (contains(chat_template, "tools")) return ToolCallSyntax::kGenericJson;
  return ToolCallSyntax::kNone;
}

// True when `text` (template source, where a newline inside a string literal may be
// written as the two characters \n) continues an opened <think> with its closing tag.
bool closes_at_once(std::string_view text) {
  while (true) {
    if (text.starts_with("\\n")) {
      text.remove_prefix(2);
    } else if (!text.empty() && (text.front() == '\n' || text.front() == ' ')) {
      text.remove_prefix(1);
    } else {
      return text.starts_with("</think>");
    }
  }
}

// The branch after the template's last add_generation_prompt test writes the prompt's
// end; an open <think> there (not Qwen3's empty "<think>\n\n</think>" for
// enable_thinking=false) starts every reply inside reasoning.
bool generation_prompt_opens_think(std::string_view chat_template) {
  const size_t branch = chat_template.rfind("add_generation_prompt");
  if (branch == std::string_view::npos) return false;
  std::string_view rest = chat_template.substr(branch);
  const size_t branch_end = rest.find("endif");
  if (branch_end != std::string_view::npos) rest = rest.substr(0, branch_end);
  for (size_t at = rest.find("<think>"); at != std::string_view::npos;
       at = rest.find("<think>", at + 1)) {
    if (!closes_at_once(rest.substr(at + 7))) return true;
  }
  return false;
}

}  // namespace

std::string_view tool_call_syntax_name(ToolCallSyntax syntax) {
  switch (syntax) {
    case ToolCallSyntax::kNone: return "none";
    case ToolCallSyntax::kHermes: return "hermes";
    case ToolCallSyntax::kQwen3Coder: return "qwen3-coder";
    case ToolCallSyntax::kLlama3: return "llama3";
    case ToolCallSyntax::kMistral: return "mistral";
    case ToolCallSyntax::kGptOss: return "gpt-oss";
    case ToolCallSyntax::kDeepSeekV3: return "deepseek-v3";
    case ToolCallSyntax::kDeepSeekV31: return "deepseek-v3.1";
    case ToolCallSyntax::kGenericJson: return "generic-json";
  }
  return "unknown";
}

std::string_view reasoning_syntax_name(ReasoningSyntax syntax) {
  switch (syntax) {
    case ReasoningSyntax::kNone: return "none";
    case ReasoningSyntax::kThinkTags: return "think-tags";
    case ReasoningSyntax::kGptOssChannels: return "gpt-oss-channels";
  }
  return "unknown";
}

ReplyFormat detect_reply_format(std::string_view chat_template) {
  ReplyFormat format;
  format.tool_calls = detect_tool_call_syntax(chat_template);
  if (format.tool_calls == ToolCallSyntax::kGptOss) {
    format.reasoning = ReasoningSyntax::kGptOssChannels;
  } else if (contains(chat_template, "<think>") || contains(chat_template, "</think>")) {
    format.reasoning = ReasoningSyntax::kThinkTags;
    format.generation_prompt_opens_think = generation_prompt_opens_think(chat_template);
  }
  return format;
}

}  // namespace strata
