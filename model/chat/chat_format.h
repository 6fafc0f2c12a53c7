// Chat formats: which family a model's chat template belongs to.
//
// Strata has no Jinja engine. A GGUF's `tokenizer.chat_template` is recognised by its
// distinctive markers as one of a few known families, each rendered natively
// (chat_render.h) byte for byte as Jinja2 renders the template under Hugging Face
// transformers. A few traits of the template text are kept beside the family, where one
// family ships in variants that render differently.
//
// Pure functions of their arguments: callable from any thread.
#pragma once

#include <string_view>

namespace strata {

enum class ChatFamily {
  kLlama3,   // <|start_header_id|>role<|end_header_id|>\n\n ... <|eot_id|> (Llama 3)
  kChatml,   // <|im_start|>role\n ... <|im_end|>\n (Qwen2, Qwen3, SmolLM, OpenHermes)
  kLlama2,   // [INST] <<SYS>>\n ... <</SYS>>\n\n ... [/INST] (Llama 2 chat)
  kMistral,  // [INST] ... [/INST], system folded into the last user turn (Mistral v0.3)
};

// "llama3", "chatml", "llama2", "mistral".
std::string_view chat_family_name(ChatFamily family);

// The family of a template plus the traits that change its rendering.
struct ChatFormat {
  ChatFamily family = ChatFamily::kChatml;
  // The template was absent or unrecognised, so plain chatml was assumed.
  bool is_fallback = false;
  // kLlama3 only: the template never reads add_generation_prompt and always ends with the
  // assistant header (Meta-Llama-3-8B-Instruct as first released; later revised).
  bool always_adds_generation_prompt = false;
  // kChatml only: Qwen3's reasoning handling. An assistant turn's "<think>...</think>"
  // is split off and kept only after the last user query, and enable_thinking=false
  // adds an empty think block to the generation prompt.
  bool has_thinking = false;
};

// Recognises `chat_template` (the GGUF's tokenizer.chat_template; empty when absent).
// An empty or unknown template gives chatml with is_fallback set, and logs a warning.
ChatFormat detect_chat_format(std::string_view chat_template);

// detect_chat_format(chat_template).family.
ChatFamily detect_chat_family(std::string_view chat_template);

}  // namespace strata
