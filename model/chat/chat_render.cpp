#include "model/chat/chat_render.h"

#include <stdexcept>

#include "common/check.h"
#include "model/chat/family_renderers.h"

namespace strata {

void throw_no_messages() {
  throw std::invalid_argument("The conversation has no messages.");
}

std::string render_chat(const ChatFormat& format, std::span<const ChatMessage> messages,
                        const ChatRenderOptions& options) {
  switch (format.family) {
    case ChatFamily::kLlama3: return render_llama3(format, messages, options);
    case ChatFamily::kChatml: return render_chatml(format, messages, options);
    case ChatFamily::kLlama2: return render_llama2(messages, options);
    case ChatFamily::kMistral: return render_mistral(messages, options);
  }
  STRATA_CHECK(false, "unknown chat family ", static_cast<int>(format.family));
  return {};
}

}  // namespace strata
