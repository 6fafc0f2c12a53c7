// JsonGrammar: the pieces of JSON text as grammar expressions, for compilers that emit
// JSON (the JSON Schema compiler). Shared rules (a string character, any value) are
// added to the builder on first use.
//
// The text is compact JSON: no whitespace except one optional space after each ':' and
// ',' (what models most often write after them). Unbounded whitespace would let a weak
// model pad forever; this bound keeps every output finite in its choices.
//
// Numbers are written without leading zeros and with at most kMaxIntegerDigits digits
// before the point, kMaxFractionDigits after it and two in an exponent, so every number
// the grammar allows parses exactly (integers) or closely (fractions) as a double.
//
// Used with one GrammarBuilder by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar_builder.h"
#include "grammar/grammar_expr.h"

namespace strata::grammar {

inline constexpr uint32_t kMaxIntegerDigits = 15;   // |integer| < 10^15 < 2^53
inline constexpr uint32_t kMaxFractionDigits = 15;
inline constexpr int64_t kMaxJsonInteger = 999'999'999'999'999;  // 10^15 - 1

// Bounds of a JSON number; absent: unbounded on that side.
struct NumberBounds {
  std::optional<double> minimum;
  bool minimum_exclusive = false;
  std::optional<double> maximum;
  bool maximum_exclusive = false;
};

class JsonGrammar {
 public:
  explicit JsonGrammar(GrammarBuilder& builder) : builder_(builder) {}

  // One character of a string's contents: unescaped UTF-8 (valid: no overlong forms or
  // surrogates) or an escape (\uXXXX only outside the surrogate range, so every
  // escape stands for one whole character).
  GrammarExpr string_char();
  // One non-ASCII character as UTF-8. `without_u2000_block` leaves out all of
  // U+2000..U+2FFF (one UTF-8 lead byte, 0xE2) so that a regex '.' never matches the line
  // and paragraph separators U+2028/U+2029: stricter than '.', never looser.
  GrammarExpr non_ascii_char(bool without_u2000_block = false);
  // A whole string, quotes included, with min..max characters (kUnbounded: no limit).
  GrammarExpr string(uint32_t min_chars = 0, uint32_t max_chars = kUnbounded);
  // A whole string whose contents differ from every name in `excluded` (given as their
  // JSON contents, escapes written out); its characters are ASCII without escapes.
  GrammarExpr string_not_in(const std::vector<std::string>& excluded);

  // An integer in [minimum, maximum], exactly; bounds are clamped to +-kMaxJsonInteger.
  GrammarExpr integer(std::optional<int64_t> minimum, std::optional<int64_t> maximum);
  // A number within `bounds` (no exponent when bounded). Integral bounds are enforced
  // exactly; a fractional bound is rounded inwards to an integer (stricter than asked).
  GrammarExpr number(const NumberBounds& bounds);

  GrammarExpr boolean() { return choice({literal("true"), literal("false")}); }
  GrammarExpr null() { return literal("null"); }
  // Any JSON value / object / array.
  GrammarExpr value();
  GrammarExpr any_object();
  GrammarExpr any_array();
  // The optional space after ':' and ','.
  GrammarExpr separator_space() { return optional(literal(" ")); }
  // ", " between members and elements: the comma and its optional space.
  GrammarExpr comma() { return sequence({literal(","), separator_space()}); }
  GrammarExpr colon() { return sequence({literal(":"), separator_space()}); }

 private:
  RuleId shared(std::optional<RuleId>& slot, const char* name, GrammarExpr (JsonGrammar::*make)());
  GrammarExpr make_string_char();
  GrammarExpr make_value();
  GrammarExpr make_any_string();
  GrammarExpr make_any_number();

  GrammarBuilder& builder_;
  std::optional<RuleId> string_char_, value_, any_string_, any_number_;
};

// The contents of a JSON string literal for `text` (quotes not included), escaping
// '"', '\\' and control characters as JSON requires.
std::string json_escape(std::string_view text);

}  // namespace strata::grammar
