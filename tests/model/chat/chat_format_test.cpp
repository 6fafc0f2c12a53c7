#include "model/chat/chat_format.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/chat/chat_render.h"

namespace strata {
namespace {

std::string read_template(const std::string& file) {
  const std::string path = std::string(STRATA_SOURCE_DIR) + "/tests/data/chat_templates/" + file;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ChatFormatTest, FamilyNames) {
  EXPECT_EQ(chat_family_name(ChatFamily::kLlama3), "llama3");
  EXPECT_EQ(chat_family_name(ChatFamily::kChatml), "chatml");
  EXPECT_EQ(chat_family_name(ChatFamily::kLlama2), "llama2");
  EXPECT_EQ(chat_family_name(ChatFamily::kMistral), "mistral");
}

TEST(ChatFormatTest, DetectsLlama3) {
  const ChatFormat release = detect_chat_format(read_template("llama3.jinja"));
  EXPECT_EQ(release.family, ChatFamily::kLlama3);
  EXPECT_FALSE(release.is_fallback);
  EXPECT_TRUE(release.always_adds_generation_prompt);

  const ChatFormat revised = detect_chat_format(read_template("llama3-revised.jinja"));
  EXPECT_EQ(revised.family, ChatFamily::kLlama3);
  EXPECT_FALSE(revised.always_adds_generation_prompt);
}

TEST(ChatFormatTest, DetectsChatmlAndQwen3Thinking) {
  const ChatFormat qwen3 = detect_chat_format(read_template("qwen3.jinja"));
  EXPECT_EQ(qwen3.family, ChatFamily::kChatml);
  EXPECT_FALSE(qwen3.is_fallback);
  EXPECT_TRUE(qwen3.has_thinking);

  const ChatFormat chatml = detect_chat_format(read_template("chatml.jinja"));
  EXPECT_EQ(chatml.family, ChatFamily::kChatml);
  EXPECT_FALSE(chatml.is_fallback);
  EXPECT_FALSE(chatml.has_thinking);
}

TEST(ChatFormatTest, TellsLlama2FromMistralBySysMarker) {
  EXPECT_EQ(detect_chat_family(read_template("llama2.jinja")), ChatFamily::kLlama2);
  EXPECT_EQ(detect_chat_family(read_template("mistral.jinja")), ChatFamily::kMistral);
  EXPECT_EQ(detect_chat_family("{{ '[INST] ' + m + ' [/INST]' }}"), ChatFamily::kMistral);
  EXPECT_EQ(detect_chat_family("{{ '[INST] <<SYS>>' }}"), ChatFamily::kLlama2);
}

TEST(ChatFormatTest, AbsentTemplateFallsBackToChatml) {
  const ChatFormat format = detect_chat_format("");
  EXPECT_EQ(format.family, ChatFamily::kChatml);
  EXPECT_TRUE(format.is_fallback);
  EXPECT_FALSE(format.has_thinking);
}

TEST(ChatFormatTest, UnknownTemplateFallsBackToChatml) {
  // Gemma's turn markers: no family of ours.
  const ChatFormat format = detect_chat_format(
      "{% for message in messages %}{{ '<start_of_turn>' + message['role'] + '\\n' }}"
      "{% endfor %}");
  EXPECT_EQ(format.family, ChatFamily::kChatml);
  EXPECT_TRUE(format.is_fallback);

  // The fallback renders plain chatml.
  const std::vector<ChatMessage> messages = {{.role = "user", .content = "Hi"}};
  EXPECT_EQ(render_chat(format, messages, ChatRenderOptions{}),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatFormatTest, RendersLlama3WithCallersBosToken) {
  const std::vector<ChatMessage> messages = {{.role = "system", .content = " Be brief. "},
                                             {.role = "user", .content = "Hi\n"}};
  const ChatFormat format{.family = ChatFamily::kLlama3};
  EXPECT_EQ(render_chat(format, messages, {.bos_token = "<BOS>"}),
            "<BOS><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(render_chat(format, std::span(messages).first(1), {.add_generation_prompt = false}),
            "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>");
}

TEST(ChatFormatTest, Qwen3ThinkingSwitch) {
  const std::vector<ChatMessage> messages = {{.role = "user", .content = "Hi"}};
  const ChatFormat format{.family = ChatFamily::kChatml, .has_thinking = true};
  EXPECT_EQ(render_chat(format, messages, {.enable_thinking = false}),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  EXPECT_EQ(render_chat(format, messages, {}),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatFormatTest, RejectsWhatTheTemplateRejects) {
  const std::vector<ChatMessage> two_users = {{.role = "user", .content = "a"},
                                              {.role = "user", .content = "b"}};
  try {
    render_chat({.family = ChatFamily::kLlama2}, two_users, {});
    FAIL() << "llama2 accepted two user turns in a row";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(),
                 "Conversation roles must alternate user/assistant/user/assistant/...");
  }
  EXPECT_THROW(render_chat({.family = ChatFamily::kMistral}, two_users, {}),
               std::invalid_argument);
  EXPECT_THROW(render_chat({.family = ChatFamily::kMistral}, {}, {}), std::invalid_argument);
  // Chatml and Llama 3 accept any sequence of roles.
  EXPECT_NO_THROW(render_chat({.family = ChatFamily::kChatml}, two_users, {}));
  EXPECT_NO_THROW(render_chat({.family = ChatFamily::kLlama3}, two_users, {}));
}

}  // namespace
}  // namespace strata
