#include "grammar/json_grammar.h"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "grammar/grammar_matcher.h"

namespace strata::grammar {
namespace {

template <typename Make>
std::shared_ptr<const Grammar> grammar_of(Make make) {
  GrammarBuilder builder;
  JsonGrammar json(builder);
  RuleId root = builder.add("root", make(json));
  return std::make_shared<const Grammar>(builder.build(root));
}

bool matches(const std::shared_ptr<const Grammar>& grammar, std::string_view text) {
  GrammarMatcher matcher(grammar);
  return matcher.accept_bytes(text) && matcher.can_end();
}

struct IntegerRange {
  std::optional<int64_t> low, high;
};

class IntegerRangeTest : public ::testing::TestWithParam<IntegerRange> {};

TEST_P(IntegerRangeTest, AcceptsExactlyTheIntegersInRange) {
  IntegerRange range = GetParam();
  auto grammar = grammar_of([&](JsonGrammar& json) { return json.integer(range.low, range.high); });
  for (int64_t value = -1200; value <= 1200; ++value) {
    bool inside = (!range.low || value >= *range.low) && (!range.high || value <= *range.high);
    EXPECT_EQ(matches(grammar, std::to_string(value)), inside) << value;
  }
  EXPECT_FALSE(matches(grammar, "-0"));
  EXPECT_FALSE(matches(grammar, "007"));
  EXPECT_FALSE(matches(grammar, "1.0"));
}

INSTANTIATE_TEST_SUITE_P(
    Ranges, IntegerRangeTest,
    ::testing::Values(IntegerRange{0, 0}, IntegerRange{1, 12}, IntegerRange{0, 100}, IntegerRange{18, 120},
                      IntegerRange{-5, 5}, IntegerRange{-1000, -17}, IntegerRange{7, std::nullopt},
                      IntegerRange{std::nullopt, -3}, IntegerRange{13, 987}, IntegerRange{std::nullopt, std::nullopt},
                      IntegerRange{-999, 1099}));

TEST(JsonGrammar, UnboundedIntegersStopAtFifteenDigits) {
  auto grammar = grammar_of([](JsonGrammar& json) { return json.integer(std::nullopt, std::nullopt); });
  EXPECT_TRUE(matches(grammar, "999999999999999"));
  EXPECT_FALSE(matches(grammar, "1000000000000000"));
  EXPECT_TRUE(matches(grammar, "-999999999999999"));
}

struct NumberCase {
  NumberBounds bounds;
};

class NumberBoundsTest : public ::testing::TestWithParam<NumberCase> {};

// Every decimal with up to two fraction digits in [-30, 30] (and a few spellings).
TEST_P(NumberBoundsTest, AcceptsExactlyTheNumbersInBounds) {
  NumberBounds b = GetParam().bounds;
  auto grammar = grammar_of([&](JsonGrammar& json) { return json.number(b); });
  auto inside = [&](double v) {
    double low = b.minimum ? std::ceil(*b.minimum) : -1e300;
    double high = b.maximum ? std::floor(*b.maximum) : 1e300;
    bool low_exclusive = b.minimum_exclusive && b.minimum && low == *b.minimum;
    bool high_exclusive = b.maximum_exclusive && b.maximum && high == *b.maximum;
    return (low_exclusive ? v > low : v >= low) && (high_exclusive ? v < high : v <= high);
  };
  for (int hundredths = -3000; hundredths <= 3000; hundredths += 7) {
    int whole = std::abs(hundredths) / 100, fraction = std::abs(hundredths) % 100;
    std::string sign = hundredths < 0 ? "-" : "";
    std::string text = sign + std::to_string(whole);
    if (fraction != 0) text += (fraction < 10 ? ".0" : ".") + std::to_string(fraction);
    if (text == "-0") continue;
    EXPECT_EQ(matches(grammar, text), inside(hundredths / 100.0)) << text;
    if (fraction == 0) {
      EXPECT_EQ(matches(grammar, text + ".00"), inside(hundredths / 100.0)) << text << ".00";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Bounds, NumberBoundsTest,
    ::testing::Values(NumberCase{{0.0, false, 1.0, false}}, NumberCase{{0.0, true, std::nullopt, false}},
                      NumberCase{{-5.0, false, 5.0, true}}, NumberCase{{-20.0, true, -3.0, false}},
                      NumberCase{{std::nullopt, false, 10.0, true}}, NumberCase{{0.5, false, 7.5, false}},
                      NumberCase{{-1.0, false, 0.0, true}}, NumberCase{{12.0, false, 12.0, false}}));

TEST(JsonGrammar, UnboundedNumbers) {
  auto grammar = grammar_of([](JsonGrammar& json) { return json.number({}); });
  for (const char* good : {"0", "-0.5", "12.25e+10", "3E-2", "1e5", "-0"}) EXPECT_TRUE(matches(grammar, good)) << good;
  for (const char* bad : {"01", ".5", "1.", "+1", "1e", "1e100", "--1"}) EXPECT_FALSE(matches(grammar, bad)) << bad;
}

TEST(JsonGrammar, StringsAreValidJsonStrings) {
  auto grammar = grammar_of([](JsonGrammar& json) { return json.string(); });
  for (const char* good : {"\"\"", "\"a b\"", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\u00e9\\uD7FF\"",
                           "\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\""}) {
    EXPECT_TRUE(matches(grammar, good)) << good;
  }
  for (const char* bad : {"\"\n\"", "\"\\x\"", "\"\\ud800\"", "\"\xC0\xAF\"", "\"\xED\xA0\x80\"", "\"\xF5\x80\x80\x80\"",
                          "\"\x80\"", "\"abc", "abc\""}) {
    EXPECT_FALSE(matches(grammar, bad)) << bad;
  }
}

TEST(JsonGrammar, StringLengthCountsCharacters) {
  auto grammar = grammar_of([](JsonGrammar& json) { return json.string(2, 3); });
  EXPECT_FALSE(matches(grammar, "\"a\""));
  EXPECT_TRUE(matches(grammar, "\"\xC3\xA9\\n\""));
  EXPECT_TRUE(matches(grammar, "\"abc\""));
  EXPECT_FALSE(matches(grammar, "\"abcd\""));
}

TEST(JsonGrammar, StringNotInExcludesExactlyTheNames) {
  auto grammar = grammar_of([](JsonGrammar& json) { return json.string_not_in({"id", "name", "i"}); });
  for (const char* good : {"\"\"", "\"ids\"", "\"n\"", "\"nam\"", "\"names\"", "\"x\"", "\"I\""}) {
    EXPECT_TRUE(matches(grammar, good)) << good;
  }
  for (const char* bad : {"\"id\"", "\"name\"", "\"i\"", "\"a\\n\""}) EXPECT_FALSE(matches(grammar, bad)) << bad;
}

TEST(JsonGrammar, AnyValueNestsWithTheSeparatorSpaceRule) {
  auto grammar = grammar_of([](JsonGrammar& json) { return json.value(); });
  EXPECT_TRUE(matches(grammar, "{\"a\": [1, {\"b\":null}, \"x\", true], \"c\":{}}"));
  EXPECT_FALSE(matches(grammar, "{\"a\" : 1}"));
  EXPECT_FALSE(matches(grammar, "{\"a\":  1}"));
  EXPECT_FALSE(matches(grammar, "[1 ,2]"));
  EXPECT_FALSE(matches(grammar, "[1,2,]"));
}

TEST(JsonGrammar, EscapesForJson) {
  EXPECT_EQ(json_escape("a\"b\\c\n\x01"), "a\\\"b\\\\c\\n\\u0001");
}

}  // namespace
}  // namespace strata::grammar
