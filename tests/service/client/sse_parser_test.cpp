// SseParser against the WHATWG event-stream rules. Every stream is fed whole, split in
// two at every byte position, and one byte at a time: the events must not change.
#include "service/client/sse_parser.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace strata {
namespace {

using Events = std::vector<std::string>;

struct Case {
  const char* name;
  std::string stream;
  Events events;
};

Events feed_all(SseParser& parser, const std::vector<std::string_view>& pieces) {
  Events events;
  for (std::string_view piece : pieces) {
    for (std::string& data : parser.feed(piece)) events.push_back(std::move(data));
  }
  return events;
}

void expect_same_events_at_every_split(const Case& c) {
  const std::string_view stream = c.stream;
  {
    SseParser parser;
    EXPECT_EQ(feed_all(parser, {stream}), c.events) << c.name << ": whole";
  }
  for (size_t split = 0; split <= stream.size(); ++split) {
    SseParser parser;
    EXPECT_EQ(feed_all(parser, {stream.substr(0, split), stream.substr(split)}), c.events)
        << c.name << ": split at byte " << split;
  }
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < stream.size(); ++i) bytes.push_back(stream.substr(i, 1));
  SseParser parser;
  EXPECT_EQ(feed_all(parser, bytes), c.events) << c.name << ": one byte at a time";
}

TEST(SseParserTest, EventsDoNotDependOnHowTheStreamIsSplit) {
  const std::vector<Case> cases = {
      {"one event", "data: hello\n\n", {"hello"}},
      {"data lines joined", "data: a\ndata: b\n\n", {"a\nb"}},
      {"crlf", "data: a\r\ndata: b\r\n\r\n", {"a\nb"}},
      {"cr", "data: a\rdata: b\r\r", {"a\nb"}},
      {"mixed line ends", "data: x\r\n\rdata: y\n\r\n", {"x", "y"}},
      {"cr then lf is one line end", "data: a\r\n\r\ndata: b\r\r", {"a", "b"}},
      {"comments", ": keep-alive\n\ndata: z\n: inside\n\n", {"z"}},
      {"other fields", "event: ping\nid: 3\nretry: 10\ndata: q\nfoo: bar\n\n", {"q"}},
      {"no space after colon", "data:nospace\n\n", {"nospace"}},
      {"only one space dropped", "data:  two\n\n", {" two"}},
      {"colon in the value", "data: {\"a\": \"b:c\"}\n\n", {"{\"a\": \"b:c\"}"}},
      {"field without colon", "data\n\n", {""}},
      {"empty data", "data:\n\n", {""}},
      {"two empty data lines", "data\ndata\n\n", {"\n"}},
      {"no data, no event", "event: x\n\nid: 1\n\n", {}},
      {"field names are case-sensitive", "Data: x\n\n", {}},
      {"blank lines between events", "\n\ndata: 1\n\n\n\ndata: 2\n\n", {"1", "2"}},
      {"unfinished event dropped", "data: a\n\ndata: b\n", {"a"}},
      {"unfinished line dropped", "data: a\n\ndata: b", {"a"}},
      {"byte-order mark at the start",
       "\xEF\xBB\xBF"
       "data: bom\n\n",
       {"bom"}},
      {"byte-order mark only at the start",
       "data: a\n\n\xEF\xBB\xBF"
       "data: b\n\n",
       {"a"}},
      {"utf-8", "data: h\xC3\xA9llo \xE2\x9C\x93\n\n", {"h\xC3\xA9llo \xE2\x9C\x93"}},
      {"openai stream",
       "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n"
       "data: {\"choices\":[{\"delta\":{\"content\":\" there\"}}]}\n\n"
       "data: [DONE]\n\n",
       {"{\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}",
        "{\"choices\":[{\"delta\":{\"content\":\" there\"}}]}", "[DONE]"}},
  };
  for (const Case& c : cases) expect_same_events_at_every_split(c);
}

TEST(SseParserTest, EventsComeAsSoonAsTheyEnd) {
  SseParser parser;
  EXPECT_EQ(parser.feed("data: a\n"), Events{});
  EXPECT_EQ(parser.feed("\ndata: b\n\nda"), Events({"a", "b"}));
  EXPECT_EQ(parser.feed("ta: c\r"), Events{});
  EXPECT_EQ(parser.feed("\r"), Events{"c"});
  // A \n right after a \r completes a \r\n line end: it is not another empty line.
  EXPECT_EQ(parser.feed("\ndata: d\n\n"), Events{"d"});
}

TEST(SseParserTest, AnOversizedEventThrows) {
  SseParser parser;
  const std::string line(SseParser::kMaxEventBytes / 2 + 1, 'x');
  parser.feed("data: " + line + "\n");
  EXPECT_THROW(parser.feed("data: " + line + "\n"), std::length_error);
  SseParser endless;
  EXPECT_THROW(endless.feed(std::string(SseParser::kMaxEventBytes + 1, 'y')), std::length_error);
}

}  // namespace
}  // namespace strata
