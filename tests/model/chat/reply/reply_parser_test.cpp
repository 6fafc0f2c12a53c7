// ReplyParser's streaming contract: what each feed reports, and what it holds back.
// The families' markup is tested in the *_reply_test.cpp files beside this one.
#include "model/chat/reply/reply_parser.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

#include "model/chat/reply/parsed_reply.h"
#include "reply_split_check.h"

namespace strata {
namespace {

const ReplyFormat kQwen3{.tool_calls = ToolCallSyntax::kHermes,
                         .reasoning = ReasoningSyntax::kThinkTags};
const ReplyParserOptions kWithTools{.tools_offered = true};

ReplyEvent content(std::string text) {
  return {.kind = ReplyEventKind::kContent, .text = std::move(text)};
}
ReplyEvent reasoning(std::string text) {
  return {.kind = ReplyEventKind::kReasoning, .text = std::move(text)};
}
ReplyEvent begin(size_t index, std::string name) {
  return {.kind = ReplyEventKind::kToolCallBegin, .text = std::move(name), .tool_index = index};
}
ReplyEvent arguments(size_t index, std::string fragment) {
  return {.kind = ReplyEventKind::kToolCallArguments, .text = std::move(fragment),
          .tool_index = index};
}

using Events = std::vector<ReplyEvent>;

TEST(ReplyParserTest, HoldsBackOnlyWhatCouldStillBeMarkup) {
  ReplyParser parser(kQwen3, kWithTools);
  EXPECT_EQ(parser.feed("Let me check"), Events{content("Let me check")});
  // " <tool" may open a call: held, with the space before it.
  EXPECT_EQ(parser.feed(" the weather. <tool"), Events{content(" the weather.")});
  // The call is not certain before its arguments begin.
  EXPECT_EQ(parser.feed("_call>\n{\"name\": \"get_weather\", \"arg"), Events{});
  EXPECT_EQ(parser.feed("uments\": {\"city\": \"Pa"),
            (Events{begin(0, "get_weather"), arguments(0, "{\"city\": \"Pa")}));
  EXPECT_EQ(parser.feed("ris\"}}\n</tool_"), Events{arguments(0, "ris\"}")});
  EXPECT_EQ(parser.feed("call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}"),
            (Events{begin(1, "get_time"), arguments(1, "{}")}));
  EXPECT_EQ(parser.finish(), Events{});
}

TEST(ReplyParserTest, TextThatOnlyLooksLikeAMarkerStartIsReleased) {
  ReplyParser parser(kQwen3, kWithTools);
  EXPECT_EQ(parser.feed("a <"), Events{content("a")});
  EXPECT_EQ(parser.feed("b is less"), Events{content(" <b is less")});
  EXPECT_EQ(parser.finish(), Events{});
}

TEST(ReplyParserTest, ReasoningStreamsAcrossASplitMarker) {
  ReplyParser parser(kQwen3, kWithTools);
  EXPECT_EQ(parser.feed("<thi"), Events{});
  EXPECT_EQ(parser.feed("nk>\nThe user"), Events{reasoning("The user")});
  EXPECT_EQ(parser.feed(" says hi.\n</th"), Events{reasoning(" says hi.")});
  EXPECT_EQ(parser.feed("ink>\n\nHello!"), Events{content("Hello!")});
  EXPECT_EQ(parser.finish(), Events{});
}

TEST(ReplyParserTest, StrayClosingThinkTagNeverReachesContent) {
  // The prompt opened <think> but the caller did not say so.
  expect_reply(kQwen3, kWithTools, "Thinking in the prompt's block.\n</think>\n\nHi!",
               {.content = "Thinking in the prompt's block.Hi!"});
}

TEST(ReplyParserTest, ReasoningWithoutToolSyntax) {
  const ReplyFormat think_only{.reasoning = ReasoningSyntax::kThinkTags};
  expect_reply(think_only, {}, "<think>Short.</think>The answer is 7.",
               {.content = "The answer is 7.", .reasoning = "Short."});
  // A reply cut off while reasoning is all reasoning.
  expect_reply(think_only, {.starts_in_reasoning = true}, "Still thinking about",
               {.reasoning = "Still thinking about"});
}

TEST(ReplyParserTest, NoFormatMeansEverythingIsContent) {
  expect_reply(ReplyFormat{}, kWithTools, "<think>x</think><tool_call>{}</tool_call>",
               {.content = "<think>x</think><tool_call>{}</tool_call>"}, {});
}

TEST(ReplyParserTest, FeedAfterFinishIsAnError) {
  ReplyParser parser(kQwen3, kWithTools);
  parser.feed("Hi");
  EXPECT_EQ(parser.finish(), Events{});
  EXPECT_THROW(parser.feed("more"), std::logic_error);
  EXPECT_THROW(parser.finish(), std::logic_error);
}

TEST(ReplyParserTest, ParseReplyEqualsFeedAndFinish) {
  const std::string text = "<think>Plan.</think>Answer.";
  ReplyParser parser(kQwen3, kWithTools);
  ParsedReply collected;
  collect_reply_events(parser.feed(text), collected);
  collect_reply_events(parser.finish(), collected);
  EXPECT_EQ(parse_reply(kQwen3, kWithTools, text), collected);
  EXPECT_EQ(collected.reasoning, "Plan.");
  EXPECT_EQ(collected.content, "Answer.");
}

// Replies strung together at random from pieces of every family's markup, JSON and
// prose: whatever they parse to, every way of cutting them must parse the same.
TEST(ReplyParserTest, RandomMarkupSoupIsSplitInvariant) {
  constexpr std::string_view kPieces[] = {
      "<think>", "</think>", "<tool_call>", "</tool_call>", "<|python_tag|>", "[TOOL_CALLS]",
      "[ARGS]", "[CALL_ID]", "<|channel|>", "analysis", "final", "commentary",
      " to=functions.get_weather", "<|constrain|>json", "<|message|>", "<|end|>", "<|call|>",
      "<|return|>", "<|start|>assistant", "<\uFF5Ctool\u2581calls\u2581begin\uFF5C>",
      "<\uFF5Ctool\u2581call\u2581begin\uFF5C>", "<\uFF5Ctool\u2581sep\uFF5C>",
      "<\uFF5Ctool\u2581call\u2581end\uFF5C>", "<\uFF5Ctool\u2581calls\u2581end\uFF5C>",
      "function", "<function=get_weather>", "</function>", "<parameter=city>", "</parameter>",
      "{", "}", "[", "]", "\"name\"", "\"arguments\"", "\"parameters\"", "\"tool_calls\"",
      ": ", ", ", "\"get_weather\"", "\"Paris\"", "42", "true", ";", "```json", "```",
      "brave_search.call(query=\"x\")", "\n", " ", "Hello", "to", "<", "|", "\xE6\x9D\xB1",
      "\xC3\xA9", "\\"};
  const ReplyFormat formats[] = {
      {.tool_calls = ToolCallSyntax::kHermes, .reasoning = ReasoningSyntax::kThinkTags},
      {.tool_calls = ToolCallSyntax::kQwen3Coder, .reasoning = ReasoningSyntax::kThinkTags},
      {.tool_calls = ToolCallSyntax::kLlama3},
      {.tool_calls = ToolCallSyntax::kMistral},
      {.tool_calls = ToolCallSyntax::kGptOss, .reasoning = ReasoningSyntax::kGptOssChannels},
      {.tool_calls = ToolCallSyntax::kDeepSeekV3, .reasoning = ReasoningSyntax::kThinkTags},
      {.tool_calls = ToolCallSyntax::kDeepSeekV31, .reasoning = ReasoningSyntax::kThinkTags},
      {.tool_calls = ToolCallSyntax::kGenericJson},
  };
  constexpr int kNReplies = 60;
  std::mt19937 random(7);
  std::uniform_int_distribution<size_t> piece(0, std::size(kPieces) - 1);
  std::uniform_int_distribution<int> n_pieces(1, 24);
  for (const ReplyFormat& format : formats) {
    SCOPED_TRACE(tool_call_syntax_name(format.tool_calls));
    for (int i = 0; i < kNReplies && !HasFailure(); ++i) {
      std::string text;
      for (int n = n_pieces(random); n > 0; --n) text += kPieces[piece(random)];
      expect_split_invariant(format, kWithTools, text);
    }
  }
}

}  // namespace
}  // namespace strata
