// One renderer per chat family, each reproducing its reference template's logic (named
// in its source file) statement by statement. Internal to engine/chat: callers use
// render_chat() (chat_render.h), which dispatches here.
#pragma once

#include <span>
#include <string>

#include "model/chat/chat_format.h"
#include "model/chat/chat_render.h"

namespace strata {

std::string render_llama3(const ChatFormat& format, std::span<const ChatMessage> messages,
                          const ChatRenderOptions& options);
std::string render_chatml(const ChatFormat& format, std::span<const ChatMessage> messages,
                          const ChatRenderOptions& options);
std::string render_llama2(std::span<const ChatMessage> messages,
                          const ChatRenderOptions& options);
std::string render_mistral(std::span<const ChatMessage> messages,
                           const ChatRenderOptions& options);

// The error for an empty conversation, where a template reads messages[0] and Jinja fails.
[[noreturn]] void throw_no_messages();

}  // namespace strata
