#include "reply_split_check.h"

#include <gtest/gtest.h>

#include <random>

namespace strata {
namespace {

constexpr int kNRandomSplits = 40;
constexpr size_t kMaxRandomChunkBytes = 9;

std::string describe_cuts(std::span<const size_t> cuts) {
  std::string text;
  for (const size_t cut : cuts) text += std::to_string(cut) + " ";
  return text;
}

// False after the first failure, so one broken reply reports once.
bool check_split(const ReplyFormat& format, const ReplyParserOptions& options,
                 std::string_view text, const ParsedReply& whole, std::span<const size_t> cuts,
                 std::span<const std::string_view> forbidden) {
  const std::vector<ReplyEvent> events = feed_in_chunks(format, options, text, cuts);
  ParsedReply streamed;
  collect_reply_events(events, streamed);
  EXPECT_EQ(streamed, whole) << "cut at " << describe_cuts(cuts);
  if (streamed != whole) return false;
  for (const ReplyEvent& event : events) {
    if (event.kind != ReplyEventKind::kContent) continue;
    for (const std::string_view piece : forbidden) {
      EXPECT_EQ(event.text.find(piece), std::string::npos)
          << "content event \"" << event.text << "\" holds markup; cut at "
          << describe_cuts(cuts);
      if (event.text.find(piece) != std::string::npos) return false;
    }
  }
  return true;
}

void expect_splits_match(const ReplyFormat& format, const ReplyParserOptions& options,
                         std::string_view text, const ParsedReply& whole,
                         std::span<const std::string_view> forbidden_in_content) {
  std::vector<size_t> cuts;
  for (size_t i = 1; i < text.size(); ++i) cuts.push_back(i);
  if (!check_split(format, options, text, whole, cuts, forbidden_in_content)) return;

  std::mt19937 random(20240607);
  for (int round = 0; round < kNRandomSplits; ++round) {
    cuts.clear();
    std::uniform_int_distribution<size_t> chunk_bytes(1, kMaxRandomChunkBytes);
    for (size_t at = chunk_bytes(random); at < text.size(); at += chunk_bytes(random)) {
      cuts.push_back(at);
    }
    if (!check_split(format, options, text, whole, cuts, forbidden_in_content)) return;
  }

  for (size_t at = 0; at <= text.size(); ++at) {
    const size_t cut[] = {at};
    if (!check_split(format, options, text, whole, cut, forbidden_in_content)) return;
  }
}

}  // namespace

void PrintTo(const ParsedReply& reply, std::ostream* out) {
  *out << "{content: \"" << reply.content << "\", reasoning: \"" << reply.reasoning
       << "\", tool_calls: [";
  for (const ParsedToolCall& call : reply.tool_calls) {
    *out << "{" << call.name << ": " << call.arguments << "} ";
  }
  *out << "]}";
}

std::vector<ReplyEvent> feed_in_chunks(const ReplyFormat& format,
                                       const ReplyParserOptions& options, std::string_view text,
                                       std::span<const size_t> cuts) {
  ReplyParser parser(format, options);
  std::vector<ReplyEvent> events;
  size_t start = 0;
  auto take = [&events](std::vector<ReplyEvent> more) {
    events.insert(events.end(), more.begin(), more.end());
  };
  for (const size_t cut : cuts) {
    take(parser.feed(text.substr(start, cut - start)));
    start = cut;
  }
  take(parser.feed(text.substr(start)));
  take(parser.finish());
  return events;
}

void expect_reply(const ReplyFormat& format, const ReplyParserOptions& options,
                  std::string_view text, const ParsedReply& expected,
                  std::span<const std::string_view> forbidden_in_content) {
  SCOPED_TRACE(std::string("reply: ") + std::string(text));
  const ParsedReply whole = parse_reply(format, options, text);
  ASSERT_EQ(whole, expected);
  expect_splits_match(format, options, text, whole, forbidden_in_content);
}

void expect_split_invariant(const ReplyFormat& format, const ReplyParserOptions& options,
                            std::string_view text) {
  SCOPED_TRACE(std::string("reply: ") + std::string(text));
  expect_splits_match(format, options, text, parse_reply(format, options, text), {});
}

}  // namespace strata
