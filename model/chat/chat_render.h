// Render a conversation into the prompt text a chat model was trained on, natively,
// byte-identical to Jinja2 rendering the model's template under Hugging Face
// transformers (see chat_format.h for the families and tests/data/chat_templates/ for
// the templates matched).
//
// Pure functions of their arguments: callable from any thread (the service renders on
// its Asio threads).
#pragma once

#include <span>
#include <string>

#include "model/chat/chat_format.h"

namespace strata {

struct ChatMessage {
  std::string role;     // "system", "user", "assistant" ("tool" where the family has one)
  std::string content;  // UTF-8
};

struct ChatRenderOptions {
  // End with the header that opens the assistant's reply.
  bool add_generation_prompt = true;
  // Qwen3 (ChatFormat::has_thinking): false ends the generation prompt with an empty
  // <think></think> block, so the model answers without reasoning.
  bool enable_thinking = true;
  // The model's special-token text (GGUF tokenizer.ggml.{bos,eos}_token_id), empty where
  // the model has none. Templates place them as text; the tokenizer turns them back into
  // the special tokens.
  std::string bos_token = {};
  std::string eos_token = {};
};

// The prompt text for `messages` in `format`. Throws std::invalid_argument, with a message
// a user can act on, for a conversation the template rejects: the template's own
// raise_exception text (e.g. "Conversation roles must alternate
// user/assistant/user/assistant/..." for llama2), or "The conversation has no messages."
// where the template fails on an empty list.
std::string render_chat(const ChatFormat& format, std::span<const ChatMessage> messages,
                        const ChatRenderOptions& options);

}  // namespace strata
