// Splits a template into tokens exactly as Jinja2's lexer does under transformers'
// settings (trim_blocks, lstrip_blocks, keep_trailing_newline off): text between tags
// comes out as kData with whitespace control already applied ({%- -%} {{- -}} {%+,
// a newline after a block or comment tag dropped, indentation before a block or comment
// tag on its own line dropped); comments vanish; {% raw %} bodies come out as kData.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::jinja {

enum class TokenKind {
  kData,           // template text, printed as is
  kVariableBegin,  // {{
  kVariableEnd,    // }}
  kBlockBegin,     // {%
  kBlockEnd,       // %}
  kName,           // identifiers and keywords (if, in, not, true, ...)
  kString,         // a string literal, escapes decoded (text holds the value)
  kInteger,
  kFloat,
  kOperator,       // + - * / // % ** ~ == != < <= > >= = . : | , ( ) [ ] { }
  kEnd,            // end of the template
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;      // data, name, string value, operator
  int line = 1;          // 1-based line the token starts on
  int64_t int_value = 0;
  double float_value = 0;
};

// The template's tokens, ending with kEnd. Throws ParseError on an unterminated tag,
// comment, string or raw block, or a character no token starts with.
std::vector<Token> tokenize(std::string_view source);

// Python's str.rstrip() / str.lstrip() (every character str.isspace() accepts).
std::string_view python_rstrip_spaces(std::string_view text);
std::string_view python_lstrip_spaces(std::string_view text);

}  // namespace strata::jinja
