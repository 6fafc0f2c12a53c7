// Acceptance test: the native renderer against Jinja2.
//
// The fixture test chat_reference_render runs tools/chat/render_reference.py, which renders
// every conversation of tests/data/chat_conversations.json with every template of
// tests/data/chat_templates/templates.json under real Jinja2 (as Hugging Face transformers
// sets it up) into STRATA_CHAT_REFERENCE. Here each template's text goes through
// detect_chat_format and each conversation through render_chat; the output must be
// byte-identical, and must throw where Jinja raised (with the template's own message where
// the template called raise_exception).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/chat/chat_format.h"
#include "model/chat/chat_render.h"

namespace strata {
namespace {

using nlohmann::json;

constexpr size_t kMinConversationsPerTemplate = 20;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

json read_json(const std::string& path) { return json::parse(read_file(path)); }

const std::string kDataDir = std::string(STRATA_SOURCE_DIR) + "/tests/data";

struct Conversation {
  std::vector<ChatMessage> messages;
  bool add_generation_prompt = true;
  bool enable_thinking = true;
};

std::map<std::string, Conversation> load_conversations() {
  std::map<std::string, Conversation> conversations;
  const json file = read_json(kDataDir + "/chat_conversations.json");
  for (const json& item : file["conversations"]) {
    Conversation conversation;
    for (const json& message : item["messages"]) {
      conversation.messages.push_back({.role = message["role"].get<std::string>(),
                                       .content = message["content"].get<std::string>()});
    }
    conversation.add_generation_prompt = item.value("add_generation_prompt", true);
    conversation.enable_thinking = item.value("enable_thinking", true);
    conversations.emplace(item["name"].get<std::string>(), std::move(conversation));
  }
  return conversations;
}

// Escapes control characters so that a mismatch is readable in the failure message.
std::string visible(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += "\\x" + std::string(1, "0123456789abcdef"[c >> 4]) + "0123456789abcdef"[c & 15];
    } else {
      out += c;
    }
  }
  return out;
}

TEST(ChatFormatReferenceTest, NativeRenderingMatchesJinja) {
  json expected;
  try {
    expected = read_json(STRATA_CHAT_REFERENCE);
  } catch (const std::exception& error) {
    FAIL() << error.what() << " (written by the ctest fixture chat_reference_render: "
           << "run `ctest -R chat_reference`)";
  }
  const std::map<std::string, Conversation> conversations = load_conversations();

  std::map<std::string, ChatFormat> formats;
  std::map<std::string, ChatRenderOptions> options_by_template;
  const json templates = read_json(kDataDir + "/chat_templates/templates.json");
  for (const json& spec : templates["templates"]) {
    const std::string name = spec["name"];
    const ChatFormat format = detect_chat_format(
        read_file(kDataDir + "/chat_templates/" + spec["file"].get<std::string>()));
    EXPECT_EQ(chat_family_name(format.family), spec["family"].get<std::string>()) << name;
    EXPECT_FALSE(format.is_fallback) << name;
    formats[name] = format;
    options_by_template[name] = {.bos_token = spec["bos_token"], .eos_token = spec["eos_token"]};
  }

  std::map<std::string, size_t> n_identical;  // by template
  std::map<std::string, size_t> n_rejected;   // by template, where Jinja raised too
  for (const json& result : expected["results"]) {
    const std::string template_name = result["template"];
    const std::string conversation_name = result["conversation"];
    SCOPED_TRACE(template_name + " / " + conversation_name);
    ASSERT_TRUE(formats.contains(template_name));
    ASSERT_TRUE(conversations.contains(conversation_name));
    const Conversation& conversation = conversations.at(conversation_name);
    ChatRenderOptions options = options_by_template.at(template_name);
    options.add_generation_prompt = conversation.add_generation_prompt;
    options.enable_thinking = conversation.enable_thinking;

    if (result.contains("error")) {
      try {
        const std::string prompt =
            render_chat(formats.at(template_name), conversation.messages, options);
        ADD_FAILURE() << "Jinja raised \"" << result["error"].get<std::string>()
                      << "\" but native rendering gave \"" << visible(prompt) << "\"";
      } catch (const std::invalid_argument& error) {
        if (result["raised_by_template"].get<bool>()) {
          EXPECT_EQ(error.what(), result["error"].get<std::string>());
        }
        ++n_rejected[template_name];
      }
      continue;
    }
    std::string prompt;
    try {
      prompt = render_chat(formats.at(template_name), conversation.messages, options);
    } catch (const std::invalid_argument& error) {
      ADD_FAILURE() << "native rendering threw \"" << error.what() << "\"";
      continue;
    }
    const std::string want = result["output"];
    if (prompt == want) {
      ++n_identical[template_name];
    } else {
      ADD_FAILURE() << "native:\n  \"" << visible(prompt) << "\"\njinja:\n  \"" << visible(want)
                    << "\"";
    }
  }

  for (const auto& [name, format] : formats) {
    std::cout << name << " (" << chat_family_name(format.family) << "): " << n_identical[name]
              << " conversations identical, " << n_rejected[name] << " rejected as Jinja does\n";
    EXPECT_GE(n_identical[name], kMinConversationsPerTemplate) << name;
  }
}

}  // namespace
}  // namespace strata
