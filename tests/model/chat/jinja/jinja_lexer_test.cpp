#include "model/chat/jinja/jinja_lexer.h"

#include <gtest/gtest.h>

#include "model/chat/jinja/jinja_error.h"

namespace strata::jinja {
namespace {

// The printed text of a template with no expressions: the kData tokens joined.
std::string data_of(std::string_view source) {
  std::string out;
  for (const Token& token : tokenize(source)) {
    if (token.kind == TokenKind::kData) out += token.text;
  }
  return out;
}

std::vector<TokenKind> kinds_of(std::string_view source) {
  std::vector<TokenKind> kinds;
  for (const Token& token : tokenize(source)) kinds.push_back(token.kind);
  return kinds;
}

TEST(JinjaLexerTest, SplitsTagsAndExpressions) {
  const std::vector<Token> tokens = tokenize("a{{ x.y|f(1, 'q') }}b");
  ASSERT_EQ(tokens.size(), 15u);  // ... b, end
  EXPECT_EQ(tokens[0].kind, TokenKind::kData);
  EXPECT_EQ(tokens[1].kind, TokenKind::kVariableBegin);
  EXPECT_EQ(tokens[2].text, "x");
  EXPECT_EQ(tokens[3].text, ".");
  EXPECT_EQ(tokens[5].text, "|");
  EXPECT_EQ(tokens[8].kind, TokenKind::kInteger);
  EXPECT_EQ(tokens[8].int_value, 1);
  EXPECT_EQ(tokens[10].kind, TokenKind::kString);
  EXPECT_EQ(tokens[10].text, "q");
  EXPECT_EQ(tokens[12].kind, TokenKind::kVariableEnd);
  EXPECT_EQ(tokens[13].kind, TokenKind::kData);
}

TEST(JinjaLexerTest, ReadsNumbersAndOperators) {
  const std::vector<Token> tokens = tokenize("{{ 1_000 2.5 1e3 a//b**c != d }}");
  EXPECT_EQ(tokens[1].int_value, 1000);
  EXPECT_EQ(tokens[2].kind, TokenKind::kFloat);
  EXPECT_DOUBLE_EQ(tokens[2].float_value, 2.5);
  EXPECT_DOUBLE_EQ(tokens[3].float_value, 1000.0);
  EXPECT_EQ(tokens[5].text, "//");
  EXPECT_EQ(tokens[7].text, "**");
  EXPECT_EQ(tokens[9].text, "!=");
}

TEST(JinjaLexerTest, DecodesStringEscapesAsPython) {
  const std::vector<Token> tokens = tokenize(R"({{ 'a\n\t\\\'' "\u00e9\x41\101" '\q' }})");
  EXPECT_EQ(tokens[1].text, "a\n\t\\'");
  EXPECT_EQ(tokens[2].text, "\xC3\xA9" "AA");
  EXPECT_EQ(tokens[3].text, "\\q");
}

TEST(JinjaLexerTest, TrimBlocksDropsTheNewlineAfterABlockTag) {
  EXPECT_EQ(data_of("{% if x %}\nA\n{% endif %}\nB"), "A\nB");
  // Not after an expression.
  EXPECT_EQ(data_of("{{ x }}\nA"), "\nA");
  // After a comment too.
  EXPECT_EQ(data_of("{# c #}\nA"), "A");
  // `+%}` keeps it.
  EXPECT_EQ(data_of("{% if x +%}\nA"), "\nA");
}

TEST(JinjaLexerTest, LstripBlocksDropsIndentationBeforeABlockTag) {
  EXPECT_EQ(data_of("A\n    {% if x %}\n    B\n  {% endif %}\n"), "A\n    B\n");
  // Text before the tag on the same line keeps its spaces.
  EXPECT_EQ(data_of("A  {% if x %}B"), "A  B");
  // Not before an expression, and not with {%+.
  EXPECT_EQ(data_of("A\n  {{ x }}"), "A\n  ");
  EXPECT_EQ(data_of("A\n  {%+ if x %}"), "A\n  ");
  // At the start of the template, and after a tag whose trimmed newline ended a line.
  EXPECT_EQ(data_of("  {% if x %}A"), "A");
  EXPECT_EQ(data_of("{% if x %}\n  {% if y %}A"), "A");
}

TEST(JinjaLexerTest, MinusStripsAllWhitespaceOnItsSide) {
  EXPECT_EQ(data_of("A \n\t {%- if x -%} \n\n B"), "AB");
  EXPECT_EQ(data_of("A  {{- x -}}  B"), "AB");
  EXPECT_EQ(data_of("A \n{#- c -#}\n B"), "AB");
}

TEST(JinjaLexerTest, RawBlocksAreText) {
  EXPECT_EQ(data_of("{% raw %}\n  {{ x }}\n  {% endraw %}\n"), "\n  {{ x }}\n");
  EXPECT_EQ(data_of("a {%- raw -%} {% if %} {%- endraw %}b"), "a{% if %}b");
}

TEST(JinjaLexerTest, NormalisesNewlinesAndDropsOneTrailingNewline) {
  EXPECT_EQ(data_of("a\r\nb\rc\n"), "a\nb\nc");
  EXPECT_EQ(data_of("a\n\n"), "a\n");
}

TEST(JinjaLexerTest, CountsLines) {
  const std::vector<Token> tokens = tokenize("a\n{# two\nlines #}\n{{ x }}\n{% if\ny %}");
  EXPECT_EQ(tokens[1].kind, TokenKind::kVariableBegin);
  EXPECT_EQ(tokens[1].line, 4);
  EXPECT_EQ(tokens.back().line, 6);
}

TEST(JinjaLexerTest, BracketsInsideATagHideItsEnd) {
  EXPECT_EQ(kinds_of("{{ {'a': 1} }}").size(), 8u);
}

TEST(JinjaLexerTest, RejectsUnterminatedConstructsWithTheirLine) {
  try {
    tokenize("a\n{{ x");
    FAIL() << "no error";
  } catch (const ParseError& error) {
    EXPECT_EQ(error.line(), 2);
    EXPECT_NE(std::string(error.what()).find("at line 2"), std::string::npos);
  }
  EXPECT_THROW(tokenize("{# open"), ParseError);
  EXPECT_THROW(tokenize("{{ 'open }}"), ParseError);
  EXPECT_THROW(tokenize("{% raw %}x"), ParseError);
  EXPECT_THROW(tokenize("{{ a ) }}"), ParseError);
  EXPECT_THROW(tokenize("{{ a ! b }}"), ParseError);
  EXPECT_THROW(tokenize("{{ 99999999999999999999 }}"), ParseError);
}

}  // namespace
}  // namespace strata::jinja
