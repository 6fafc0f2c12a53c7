#include "model/chat/chat_format.h"

#include "common/log.h"

namespace strata {
namespace {

bool contains(std::string_view text, std::string_view marker) {
  return text.find(marker) != std::string_view::npos;
}

}  // namespace

std::string_view chat_family_name(ChatFamily family) {
  switch (family) {
    case ChatFamily::kLlama3: return "llama3";
    case ChatFamily::kChatml: return "chatml";
    case ChatFamily::kLlama2: return "llama2";
    case ChatFamily::kMistral: return "mistral";
  }
  return "unknown";
}

ChatFormat detect_chat_format(std::string_view chat_template) {
  ChatFormat format;
  // Each family's turn markers are its own; Llama 2 and Mistral share [INST] but only
  // Llama 2 wraps the system prompt in <<SYS>>.
  if (contains(chat_template, "<|start_header_id|>")) {
    format.family = ChatFamily::kLlama3;
    format.always_adds_generation_prompt = !contains(chat_template, "add_generation_prompt");
    if (contains(chat_template, "Cutting Knowledge Date")) {
      // Llama 3.1+ templates open every prompt with a system turn holding dates and tool
      // instructions; the llama3 renderer leaves that turn out.
      log_warning("Llama 3.1-style chat template: rendering as Llama 3, without its "
                  "\"Cutting Knowledge Date\" system header");
    }
  } else if (contains(chat_template, "<|im_start|>")) {
    format.family = ChatFamily::kChatml;
    format.has_thinking = contains(chat_template, "<think>");
  } else if (contains(chat_template, "[INST]")) {
    format.family =
        contains(chat_template, "<<SYS>>") ? ChatFamily::kLlama2 : ChatFamily::kMistral;
  } else {
    format.family = ChatFamily::kChatml;
    format.is_fallback = true;
    if (chat_template.empty()) {
      log_warning("the model has no chat template (tokenizer.chat_template); "
                  "using chatml, which may not be the format the model was trained on");
    } else {
      log_warning("unrecognised chat template (", chat_template.size(),
                  " bytes, starting \"", chat_template.substr(0, 60),
                  "\"); using chatml, which may not be the format the model was trained on");
    }
  }
  return format;
}

ChatFamily detect_chat_family(std::string_view chat_template) {
  return detect_chat_format(chat_template).family;
}

}  // namespace strata
