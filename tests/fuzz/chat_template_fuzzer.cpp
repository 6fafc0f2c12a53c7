// libFuzzer target for the chat formats (model/chat/): any template text is
// recognised, and any conversation is rendered both in the recognised format
// and in a format the input picks (every family and trait).
//
// Input (FuzzedDataProvider): flags, the template, bos and eos text, then
// messages (a role picked from the known ones or arbitrary, and content) until
// the input runs out.
//
// Promises checked:
//  - detection follows the families' markers (chat_format.cpp's order);
//  - python_strip is Python's str.strip() (an independent code-point reference);
//  - render_chat refuses (std::invalid_argument, with a message) exactly the
//    conversations the family's reference template raises on, and throws
//    nothing else;
//  - a rendered prompt holds every user turn's words as the family prints them.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/log.h"
#include "model/chat/chat_format.h"
#include "model/chat/chat_render.h"
#include "model/chat/python_strip.h"
#include "model/tokenizer/utf8.h"

namespace strata {
namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "chat_template_fuzzer: %s\n", what.c_str());
  std::abort();
}

// Python's str.isspace(): bidirectional class WS, B or S, or category Zs.
bool is_python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

// The code point at text[pos] of valid UTF-8, and its length, decoded here
// rather than with the tokenizer's helpers so that the reference shares no code.
char32_t decode_at(std::string_view text, size_t pos, size_t& length) {
  const auto byte = [&](size_t i) { return static_cast<char32_t>(static_cast<uint8_t>(text[i])); };
  const char32_t lead = byte(pos);
  if (lead < 0x80) {
    length = 1;
    return lead;
  }
  length = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  char32_t c = lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) c = (c << 6) | (byte(pos + i) & 0x3F);
  return c;
}

// str.strip() of valid UTF-8, character by character.
std::string_view reference_strip(std::string_view text) {
  size_t begin = text.size();
  size_t end = 0;
  for (size_t pos = 0, length = 0; pos < text.size(); pos += length) {
    if (!is_python_space(decode_at(text, pos, length))) {
      begin = std::min(begin, pos);
      end = pos + length;
    }
  }
  return begin < end ? text.substr(begin, end - begin) : std::string_view();
}

void check_strip(std::string_view text) {
  const std::string_view stripped = python_strip(text);
  if (stripped != reference_strip(text)) {
    fail("python_strip(\"" + std::string(text) + "\") is \"" + std::string(stripped) +
         "\", Python gives \"" + std::string(reference_strip(text)) + "\"");
  }
}

ChatFamily expected_family(std::string_view chat_template) {
  const auto has = [&](std::string_view marker) {
    return chat_template.find(marker) != std::string_view::npos;
  };
  if (has("<|start_header_id|>")) return ChatFamily::kLlama3;
  if (has("<|im_start|>")) return ChatFamily::kChatml;
  if (has("[INST]")) return has("<<SYS>>") ? ChatFamily::kLlama2 : ChatFamily::kMistral;
  return ChatFamily::kChatml;
}

// The messages after an optional leading system message.
std::span<const ChatMessage> after_system(std::span<const ChatMessage> messages) {
  if (!messages.empty() && messages[0].role == "system") return messages.subspan(1);
  return messages;
}

// Whether the family's reference template raises on this conversation (see the
// comments at the top of each render_*.cpp, taken from the templates).
bool template_raises(const ChatFormat& format, std::span<const ChatMessage> messages) {
  switch (format.family) {
    case ChatFamily::kLlama3:
      return false;
    case ChatFamily::kChatml:
      return format.has_thinking && messages.empty();
    case ChatFamily::kLlama2: {
      if (messages.empty()) return true;
      const auto turns = after_system(messages);
      for (size_t i = 0; i < turns.size(); ++i) {
        if ((turns[i].role == "user") != (i % 2 == 0)) return true;
      }
      return false;
    }
    case ChatFamily::kMistral: {
      if (messages.empty()) return true;
      // Only user and assistant turns, alternating from a user turn, render.
      const auto turns = after_system(messages);
      for (size_t i = 0; i < turns.size(); ++i) {
        if (turns[i].role != "user" && turns[i].role != "assistant") return true;
        if ((turns[i].role == "user") != (i % 2 == 0)) return true;
      }
      return false;
    }
  }
  return false;
}

// Each user turn's words as the family prints them, where that is a plain
// substring of the prompt: llama3 and llama2 strip the content; llama2 joins the
// system prompt to the first turn and mistral to the last user turn.
std::vector<std::string> printed_user_words(const ChatFormat& format,
                                            std::span<const ChatMessage> messages) {
  std::vector<std::string> words;
  const bool has_system = !messages.empty() && messages[0].role == "system";
  for (size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].role != "user") continue;
    const std::string& content = messages[i].content;
    switch (format.family) {
      case ChatFamily::kLlama3:
        words.emplace_back(reference_strip(content));
        break;
      case ChatFamily::kChatml:
        words.push_back(content);
        break;
      case ChatFamily::kLlama2:
        if (!(has_system && i == 1)) words.emplace_back(reference_strip(content));
        break;
      case ChatFamily::kMistral:
        words.push_back(content);
        break;
    }
  }
  return words;
}

void check_render(const ChatFormat& format, std::span<const ChatMessage> messages,
                  const ChatRenderOptions& options) {
  std::optional<std::string> prompt;
  try {
    prompt = render_chat(format, messages, options);
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).empty()) fail("a refusal without a message");
  }
  const std::string family(chat_family_name(format.family));
  const bool raises = template_raises(format, messages);
  if (raises != !prompt) {
    fail(family + (raises ? " rendered a conversation its template refuses"
                          : " refused a conversation its template renders"));
  }
  if (!prompt) return;
  for (const std::string& words : printed_user_words(format, messages)) {
    if (prompt->find(words) == std::string::npos) {
      fail(family + " lost a user turn's words \"" + words + "\"");
    }
  }
  if (format.family == ChatFamily::kLlama3 && !messages.empty() &&
      !prompt->starts_with(options.bos_token)) {
    fail("llama3 prompt does not open with the bos text");
  }
  const bool llama3_prompt = format.family == ChatFamily::kLlama3 &&
                             (options.add_generation_prompt || format.always_adds_generation_prompt);
  if (llama3_prompt && !prompt->ends_with("<|start_header_id|>assistant<|end_header_id|>\n\n")) {
    fail("llama3 prompt lacks the generation prompt");
  }
  // Plain chatml ends every turn with <|im_end|>\n: only the generation prompt
  // ends with the assistant header.
  if (format.family == ChatFamily::kChatml && !format.has_thinking &&
      options.add_generation_prompt != prompt->ends_with("<|im_start|>assistant\n")) {
    fail("chatml prompt and add_generation_prompt disagree");
  }
}

constexpr std::array<std::string_view, 6> kRoles = {"system",    "user", "assistant",
                                                    "developer", "tool", "tool_results"};

}  // namespace
}  // namespace strata

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Unrecognised templates log a warning each; the fuzzer makes millions.
  strata::set_log_level(strata::LogLevel::kError);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  FuzzedDataProvider input(data, size);
  const auto flags = input.ConsumeIntegral<uint8_t>();
  const std::string chat_template = input.ConsumeRandomLengthString(4096);
  // Message text comes from JSON, which is valid UTF-8.
  ChatRenderOptions options{.add_generation_prompt = (flags & 0x10) != 0,
                            .enable_thinking = (flags & 0x20) != 0,
                            .bos_token = utf8::sanitize(input.ConsumeRandomLengthString(16)),
                            .eos_token = utf8::sanitize(input.ConsumeRandomLengthString(16))};
  std::vector<ChatMessage> messages;
  while (input.remaining_bytes() > 0 && messages.size() < 64) {
    const auto pick = input.ConsumeIntegral<uint8_t>();
    std::string role = pick < 240 ? std::string(kRoles[pick % kRoles.size()])
                                  : utf8::sanitize(input.ConsumeRandomLengthString(16));
    std::string content = utf8::sanitize(input.ConsumeRandomLengthString(2048));
    check_strip(content);
    messages.push_back({.role = std::move(role), .content = std::move(content)});
  }

  const ChatFormat detected = detect_chat_format(chat_template);
  if (detected.family != expected_family(chat_template)) {
    fail("template recognised as " + std::string(chat_family_name(detected.family)));
  }
  const bool unknown = chat_template.find("<|start_header_id|>") == std::string::npos &&
                       chat_template.find("<|im_start|>") == std::string::npos &&
                       chat_template.find("[INST]") == std::string::npos;
  if (detected.is_fallback != unknown) fail("is_fallback disagrees with the markers");
  check_render(detected, messages, options);

  const ChatFormat picked{.family = static_cast<ChatFamily>(flags & 3),
                          .is_fallback = false,
                          .always_adds_generation_prompt = (flags & 4) != 0,
                          .has_thinking = (flags & 8) != 0};
  check_render(picked, messages, options);
  return 0;
}
