// json_string_regex: compiles a regular expression (JSON Schema's "pattern", ECMA-262
// syntax) to the grammar of a JSON string's contents whose decoded value matches it.
//
// The subset: literals (UTF-8 included), '.', classes [a-z_] and [^...], the escapes
// \d \w \s \D \W \S and escaped metacharacters, \n \t \r \f \v \uXXXX, groups (...)
// and (?:...), alternation, the quantifiers ? * + {n} {n,} {n,m} (lazy forms match the
// same strings), and the anchors ^ and $ at the start and end of the whole pattern.
// Without ^ (or $) the match may start (or end) anywhere: any characters are allowed
// before (or after). Each character is written in one form: as itself, or for '"',
// '\\' and control characters the JSON escape. A few classes match fewer characters
// than ECMA-262 would (non-ASCII in \S, U+2000..U+2FFF in '.'): outputs stay valid.
//
// Pure function: any thread (the JsonGrammar's builder is the caller's).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "grammar/grammar_expr.h"
#include "grammar/json_grammar.h"

namespace strata::grammar {

// What a pattern compiles to, and how many characters a matching string has.
struct JsonStringRegex {
  GrammarExpr contents;             // the string's contents, without quotes
  uint32_t min_chars = 0;
  uint32_t max_chars = kUnbounded;  // kUnbounded when not anchored at both ends or unbounded
};

// Throws std::invalid_argument naming the construct and its offset in `pattern` for
// syntax outside the subset (lookaround, backreferences, \b, inner anchors, ...).
JsonStringRegex compile_json_string_regex(std::string_view pattern, JsonGrammar& json);

}  // namespace strata::grammar
