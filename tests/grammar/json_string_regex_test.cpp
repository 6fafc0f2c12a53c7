#include "grammar/json_string_regex.h"

#include <memory>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "grammar/grammar_matcher.h"

namespace strata::grammar {
namespace {

struct Compiled {
  std::shared_ptr<const Grammar> grammar;
  uint32_t min_chars = 0, max_chars = 0;
};

Compiled compile(std::string_view pattern) {
  GrammarBuilder builder;
  JsonGrammar json(builder);
  JsonStringRegex regex = compile_json_string_regex(pattern, json);
  RuleId root = builder.add("root", sequence({literal("\""), std::move(regex.contents), literal("\"")}));
  return Compiled{std::make_shared<const Grammar>(builder.build(root)), regex.min_chars, regex.max_chars};
}

// `contents`: the JSON string's contents as written (escapes included).
bool matches(const Compiled& compiled, std::string_view contents) {
  GrammarMatcher matcher(compiled.grammar);
  return matcher.accept_bytes("\"" + std::string(contents) + "\"") && matcher.can_end();
}

TEST(JsonStringRegex, AnchoredLiteralsClassesAndQuantifiers) {
  Compiled phone = compile("^\\+?[0-9]{1,3}-\\d{3}-\\d{4}$");
  EXPECT_TRUE(matches(phone, "+1-555-1234"));
  EXPECT_TRUE(matches(phone, "44-555-1234"));
  EXPECT_FALSE(matches(phone, "1-555-123"));
  EXPECT_FALSE(matches(phone, "x1-555-1234"));
  EXPECT_EQ(phone.min_chars, 10u);
  EXPECT_EQ(phone.max_chars, 13u);
}

TEST(JsonStringRegex, GroupsAlternationAndNegatedClasses) {
  Compiled code = compile("^(?:ab|c(d|e)+)[^0-9\"]$");
  EXPECT_TRUE(matches(code, "abx"));
  EXPECT_TRUE(matches(code, "cdedx"));
  EXPECT_TRUE(matches(code, "ce\xC3\xA9"));
  EXPECT_TRUE(matches(code, "ab\\n"));
  EXPECT_FALSE(matches(code, "ab1"));
  EXPECT_FALSE(matches(code, "ab\\\""));
  EXPECT_FALSE(matches(code, "cx"));
  EXPECT_EQ(code.max_chars, kUnbounded);
}

TEST(JsonStringRegex, UnanchoredPatternsMatchAnywhere) {
  Compiled digits = compile("[0-9]{3}");
  EXPECT_TRUE(matches(digits, "abc123def"));
  EXPECT_TRUE(matches(digits, "123"));
  EXPECT_FALSE(matches(digits, "12a3"));
  Compiled start = compile("^ab");
  EXPECT_TRUE(matches(start, "abzz"));
  EXPECT_FALSE(matches(start, "zab"));
}

TEST(JsonStringRegex, CharactersNeedingEscapesAreWrittenEscaped) {
  Compiled quote = compile("^a\"b\\\\c\\td$");
  EXPECT_TRUE(matches(quote, "a\\\"b\\\\c\\td"));
  EXPECT_FALSE(matches(quote, "a\"b\\\\c\\td"));
}

TEST(JsonStringRegex, DotAndShorthands) {
  Compiled dot = compile("^.\\w\\s\\S$");
  EXPECT_TRUE(matches(dot, "\xC3\xA9_ x"));
  EXPECT_FALSE(matches(dot, "\\n_ x"));
  EXPECT_FALSE(matches(dot, "a- x"));
  EXPECT_FALSE(matches(dot, "a_  "));
  Compiled unicode = compile("^\\u00e9[\\u0041-Z]$");
  EXPECT_TRUE(matches(unicode, "\xC3\xA9" "B"));
}

TEST(JsonStringRegex, RefusesWhatItCannotCompile) {
  for (const char* pattern : {"(?=a)", "(a)\\1", "\\bword", "a^b", "^a|b$", "[\xC3\xA9-\xC3\xBF]", "a{2,1}", "(ab",
                              "[ab", "*a", "a**", "\\p{L}", "a{1001}"}) {
    EXPECT_THROW(compile(pattern), std::invalid_argument) << pattern;
  }
}

}  // namespace
}  // namespace strata::grammar
