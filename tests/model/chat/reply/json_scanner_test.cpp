#include "model/chat/reply/json_scanner.h"

#include <gtest/gtest.h>

#include <string>

#include "model/chat/reply/json_text.h"

namespace strata {
namespace {

TEST(JsonScannerTest, StopsAtTheEndOfTheValue) {
  JsonScanner scanner;
  const std::string text = R"({"a": [1, 2.5e-3, "x\"}"], "b": {"c": null}} trailing)";
  const size_t n = scanner.scan(text);
  EXPECT_EQ(scanner.state(), JsonScanner::State::kComplete);
  EXPECT_EQ(text.substr(n), " trailing");
}

TEST(JsonScannerTest, ByteByByteEqualsAtOnce) {
  const std::string text = R"({"city": "Z\u00fcrich", "days": [1, 2], "ok": true})";
  JsonScanner scanner;
  size_t consumed = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    consumed += scanner.scan(text.substr(i, 1));
    if (i + 1 < text.size()) {
      EXPECT_EQ(scanner.state(), JsonScanner::State::kScanning) << i;
    }
  }
  EXPECT_EQ(consumed, text.size());
  EXPECT_EQ(scanner.state(), JsonScanner::State::kComplete);
}

TEST(JsonScannerTest, StopsBeforeTheFirstInvalidByte) {
  const struct {
    const char* text;
    size_t valid_bytes;
  } cases[] = {
      {R"({"a": tru3})", 10},  // the literal is judged when it ends
      {R"({"a" 1})", 5},       // no colon
      {R"({"a": 1,})", 9},     // a trailing comma needs a key
      {R"({"a": "\x"})", 8},   // bad escape
      {R"([1 2])", 3},         // no comma
      {R"({'a': 1})", 1},      // single quotes
  };
  for (const auto& c : cases) {
    JsonScanner scanner;
    const size_t n = scanner.scan(c.text);
    EXPECT_EQ(scanner.state(), JsonScanner::State::kInvalid) << c.text;
    EXPECT_LE(n, c.valid_bytes) << c.text;
  }
}

TEST(JsonScannerTest, TopLevelNumberEndsAtTheEndOfInput) {
  JsonScanner scanner;
  EXPECT_EQ(scanner.scan("42"), 2u);
  EXPECT_EQ(scanner.state(), JsonScanner::State::kScanning);
  EXPECT_EQ(scanner.finish(), JsonScanner::State::kComplete);
}

TEST(JsonScannerTest, IsJsonValue) {
  EXPECT_TRUE(is_json_value(" {\"a\": [true, false, null]} "));
  EXPECT_TRUE(is_json_value("-0.5E+2"));
  EXPECT_FALSE(is_json_value("{\"a\": 1} x"));
  EXPECT_FALSE(is_json_value("{\"a\": 1"));
  EXPECT_FALSE(is_json_value("01"));
  EXPECT_FALSE(is_json_value(""));
}

TEST(JsonTextTest, QuoteEscapesControlCharacters) {
  EXPECT_EQ(json_quote("a\"b\\c\nd\x01"), R"("a\"b\\c\nd\u0001")");
  EXPECT_EQ(json_quote("Z\xC3\xBCrich"), "\"Z\xC3\xBCrich\"");
}

TEST(JsonTextTest, ReadsStringsWithEscapesAndSurrogatePairs) {
  const JsonStringRead read = read_json_string(R"(x "a\n\u00e9\ud83d\ude00" y)", 2);
  ASSERT_EQ(read.status, JsonStringRead::Status::kComplete);
  EXPECT_EQ(read.value, "a\n\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(read.end, 25u);
  EXPECT_EQ(read_json_string(R"("abc)", 0).status, JsonStringRead::Status::kIncomplete);
  EXPECT_EQ(read_json_string(R"("a\u00)", 0).status, JsonStringRead::Status::kIncomplete);
  EXPECT_EQ(read_json_string(R"("a\q")", 0).status, JsonStringRead::Status::kInvalid);
  EXPECT_EQ(read_json_string("abc", 0).status, JsonStringRead::Status::kInvalid);
}

TEST(JsonTextTest, NumberGrammar) {
  for (const char* good : {"0", "-1", "3.25", "1e9", "-0.0E-7"}) EXPECT_TRUE(is_json_number(good)) << good;
  for (const char* bad : {"", "-", "01", "+1", ".5", "1.", "1e", "0x10", "NaN"}) {
    EXPECT_FALSE(is_json_number(bad)) << bad;
  }
}

}  // namespace
}  // namespace strata
