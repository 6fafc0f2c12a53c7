#include "grammar/json_grammar.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

namespace strata::grammar {
namespace {

GrammarExpr range(uint8_t first, uint8_t last) { return bytes(ByteSet::range(first, last)); }
GrammarExpr digit() { return range('0', '9'); }
GrammarExpr nonzero_digit() { return range('1', '9'); }
GrammarExpr hex_digit() {
  ByteSet set = ByteSet::range('0', '9');
  set.insert_range('a', 'f');
  set.insert_range('A', 'F');
  return bytes(set);
}

// Decimal strings of [low, high] (same number of digits), without leading zeros
// beyond those the bounds themselves have.
GrammarExpr same_length_range(std::string_view low, std::string_view high) {
  if (low.size() == 1) return range(static_cast<uint8_t>(low[0]), static_cast<uint8_t>(high[0]));
  std::string_view low_rest = low.substr(1), high_rest = high.substr(1);
  if (low[0] == high[0]) {
    return sequence({literal(low.substr(0, 1)), same_length_range(low_rest, high_rest)});
  }
  bool low_rest_zeros = low_rest.find_first_not_of('0') == std::string_view::npos;
  bool high_rest_nines = high_rest.find_first_not_of('9') == std::string_view::npos;
  auto any_digits = [&] { return repeat(digit(), static_cast<uint32_t>(low_rest.size()),
                                        static_cast<uint32_t>(low_rest.size())); };
  std::vector<GrammarExpr> out;
  uint8_t first_full = static_cast<uint8_t>(low[0] + (low_rest_zeros ? 0 : 1));
  uint8_t last_full = static_cast<uint8_t>(high[0] - (high_rest_nines ? 0 : 1));
  if (!low_rest_zeros) {
    out.push_back(sequence({literal(low.substr(0, 1)),
                            same_length_range(low_rest, std::string(low_rest.size(), '9'))}));
  }
  if (first_full <= last_full) out.push_back(sequence({range(first_full, last_full), any_digits()}));
  if (!high_rest_nines) {
    out.push_back(sequence({literal(high.substr(0, 1)),
                            same_length_range(std::string(high_rest.size(), '0'), high_rest)}));
  }
  return choice(std::move(out));
}

int64_t power_of_ten(size_t n) {
  int64_t out = 1;
  while (n-- > 0) out *= 10;
  return out;
}

// Non-negative integers in [low, high] in canonical decimal.
GrammarExpr natural_range(int64_t low, int64_t high) {
  std::vector<GrammarExpr> out;
  size_t low_digits = std::to_string(low).size(), high_digits = std::to_string(high).size();
  for (size_t n = low_digits; n <= high_digits; ++n) {
    int64_t from = std::max(low, n == 1 ? 0 : power_of_ten(n - 1));
    int64_t to = std::min(high, power_of_ten(n) - 1);
    out.push_back(same_length_range(std::to_string(from), std::to_string(to)));
  }
  return choice(std::move(out));
}

GrammarExpr fraction_any() {
  return optional(sequence({literal("."), repeat(digit(), 1, kMaxFractionDigits)}));
}
GrammarExpr fraction_zero() {
  return optional(sequence({literal("."), repeat(literal("0"), 1, kMaxFractionDigits)}));
}
GrammarExpr fraction_nonzero() {
  return sequence({literal("."), repeat(literal("0"), 0, kMaxFractionDigits - 1), nonzero_digit(),
                   repeat(digit(), 0, kMaxFractionDigits - 1)});
}

// Integral bounds of a non-negative value k.f (absent high: unbounded).
struct HalfBounds {
  int64_t low = 0;
  bool low_exclusive = false;
  std::optional<int64_t> high;
  bool high_exclusive = false;
};

// v = k.f >= a  <=>  k >= a;   v > a  <=>  k > a, or k == a and f != 0;
// v <= b  <=>  k < b, or k == b and f == 0;   v < b  <=>  k < b.
std::optional<GrammarExpr> non_negative_number(const HalfBounds& b) {
  std::vector<GrammarExpr> out;
  int64_t top = b.high ? *b.high : kMaxJsonInteger;
  int64_t any_low = b.low + (b.low_exclusive ? 1 : 0);
  int64_t any_high = b.high ? top - 1 : top;
  if (any_low <= any_high) out.push_back(sequence({natural_range(any_low, any_high), fraction_any()}));
  if (b.low_exclusive && b.low < top) out.push_back(sequence({natural_range(b.low, b.low), fraction_nonzero()}));
  bool low_ok = b.high && (*b.high > b.low || (*b.high == b.low && !b.low_exclusive));
  if (b.high && !b.high_exclusive && low_ok) {
    out.push_back(sequence({natural_range(top, top), fraction_zero()}));
  }
  if (out.empty()) return std::nullopt;
  return choice(std::move(out));
}

int64_t clamp_integer(double value) {
  return static_cast<int64_t>(std::clamp(value, -static_cast<double>(kMaxJsonInteger),
                                         static_cast<double>(kMaxJsonInteger)));
}

}  // namespace

std::string json_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (byte < 0x20) {
          const char* hex = "0123456789abcdef";
          out += "\\u00";
          out += hex[byte >> 4];
          out += hex[byte & 15];
        } else {
          out += c;
        }
    }
  }
  return out;
}

RuleId JsonGrammar::shared(std::optional<RuleId>& slot, const char* name,
                           GrammarExpr (JsonGrammar::*make)()) {
  if (!slot) {
    slot = builder_.declare(name);
    builder_.define(*slot, (this->*make)());
  }
  return *slot;
}

GrammarExpr JsonGrammar::make_string_char() {
  ByteSet ascii = ByteSet::range(0x20, 0x7F);
  ascii.erase('"');
  ascii.erase('\\');
  ByteSet surrogate_free_first = ByteSet::range('0', '9');
  surrogate_free_first.insert_range('a', 'c');
  surrogate_free_first.insert_range('A', 'C');
  surrogate_free_first.insert_range('e', 'f');
  surrogate_free_first.insert_range('E', 'F');
  GrammarExpr unicode_escape = choice({
      sequence({bytes(surrogate_free_first), hex_digit(), hex_digit(), hex_digit()}),
      sequence({bytes(ByteSet::of_chars("dD")), range('0', '7'), hex_digit(), hex_digit()}),
  });
  return choice({
      bytes(ascii),
      non_ascii_char(),
      sequence({literal("\\"), choice({bytes(ByteSet::of_chars("\"\\/bfnrt")),
                                       sequence({literal("u"), std::move(unicode_escape)})})}),
  });
}

GrammarExpr JsonGrammar::non_ascii_char(bool without_u2000_block) {
  GrammarExpr continuation = range(0x80, 0xBF);
  ByteSet three_byte_leads = ByteSet::range(0xE1, 0xEC);
  three_byte_leads.insert_range(0xEE, 0xEF);
  if (without_u2000_block) three_byte_leads.erase(0xE2);
  return choice({
      sequence({range(0xC2, 0xDF), continuation}),
      sequence({literal("\xE0"), range(0xA0, 0xBF), continuation}),
      sequence({bytes(three_byte_leads), continuation, continuation}),
      sequence({literal("\xED"), range(0x80, 0x9F), continuation}),
      sequence({literal("\xF0"), range(0x90, 0xBF), continuation, continuation}),
      sequence({range(0xF1, 0xF3), continuation, continuation, continuation}),
      sequence({literal("\xF4"), range(0x80, 0x8F), continuation, continuation}),
  });
}

GrammarExpr JsonGrammar::string_char() {
  return rule_ref(shared(string_char_, "string_char", &JsonGrammar::make_string_char));
}

GrammarExpr JsonGrammar::make_any_string() { return string(0, kUnbounded); }

GrammarExpr JsonGrammar::string(uint32_t min_chars, uint32_t max_chars) {
  if (min_chars == 0 && max_chars == kUnbounded && any_string_) return rule_ref(*any_string_);
  return sequence({literal("\""), repeat(string_char(), min_chars, max_chars), literal("\"")});
}

GrammarExpr JsonGrammar::string_not_in(const std::vector<std::string>& excluded) {
  ByteSet allowed = ByteSet::range(0x20, 0x7E);
  allowed.erase('"');
  allowed.erase('\\');
  RuleId any_rest = builder_.add("key_rest", repeat(bytes(allowed), 0, kUnbounded));
  // One rule per trie node of the excluded names: end here (unless a name ends here),
  // leave the trie by a byte no name continues with, or follow a name.
  std::map<std::string, RuleId> nodes;
  std::vector<std::string> prefixes{""};
  for (const std::string& name : excluded) {
    for (size_t n = 1; n <= name.size(); ++n) prefixes.push_back(name.substr(0, n));
  }
  std::sort(prefixes.begin(), prefixes.end());
  prefixes.erase(std::unique(prefixes.begin(), prefixes.end()), prefixes.end());
  for (const std::string& prefix : prefixes) nodes[prefix] = builder_.declare("key_not_in");
  for (const std::string& prefix : prefixes) {
    std::vector<GrammarExpr> alternatives;
    bool is_name = std::find(excluded.begin(), excluded.end(), prefix) != excluded.end();
    if (!is_name) alternatives.push_back(empty());
    ByteSet leave = allowed;
    for (auto it = nodes.upper_bound(prefix); it != nodes.end() && it->first.starts_with(prefix); ++it) {
      if (it->first.size() != prefix.size() + 1) continue;
      uint8_t next = static_cast<uint8_t>(it->first.back());
      leave.erase(next);
      alternatives.push_back(sequence({bytes(ByteSet::of(next)), rule_ref(it->second)}));
    }
    if (!leave.empty()) alternatives.push_back(sequence({bytes(leave), rule_ref(any_rest)}));
    builder_.define(nodes[prefix], choice(std::move(alternatives)));
  }
  return sequence({literal("\""), rule_ref(nodes[""]), literal("\"")});
}

GrammarExpr JsonGrammar::integer(std::optional<int64_t> minimum, std::optional<int64_t> maximum) {
  int64_t low = std::max(minimum.value_or(-kMaxJsonInteger), -kMaxJsonInteger);
  int64_t high = std::min(maximum.value_or(kMaxJsonInteger), kMaxJsonInteger);
  std::vector<GrammarExpr> out;
  if (high >= 0) out.push_back(natural_range(std::max<int64_t>(low, 0), high));
  if (low < 0) {
    out.push_back(sequence({literal("-"), natural_range(std::max<int64_t>(-high, 1), -low)}));
  }
  return choice(std::move(out));  // an empty range is an empty choice: the builder reports it
}

GrammarExpr JsonGrammar::number(const NumberBounds& bounds) {
  if (!bounds.minimum && !bounds.maximum) {
    return rule_ref(shared(any_number_, "number", &JsonGrammar::make_any_number));
  }
  // Round fractional bounds inwards; a rounded bound is inclusive.
  std::optional<int64_t> low, high;
  bool low_exclusive = bounds.minimum_exclusive, high_exclusive = bounds.maximum_exclusive;
  if (bounds.minimum) {
    double rounded = std::ceil(*bounds.minimum);
    if (rounded != *bounds.minimum) low_exclusive = false;
    low = clamp_integer(rounded);
  }
  if (bounds.maximum) {
    double rounded = std::floor(*bounds.maximum);
    if (rounded != *bounds.maximum) high_exclusive = false;
    high = clamp_integer(rounded);
  }
  std::vector<GrammarExpr> out;
  if (!high || *high > 0 || (*high == 0 && !high_exclusive)) {
    bool from_zero = !low || *low < 0;
    HalfBounds positive{from_zero ? 0 : *low, from_zero ? false : low_exclusive, high, high_exclusive};
    if (auto part = non_negative_number(positive)) out.push_back(std::move(*part));
  }
  if (!low || *low < 0) {
    // v < 0: u = -v in (max(0, -high), -low], exclusivity carried over.
    bool to_zero = !high || *high >= 0;
    HalfBounds negative{to_zero ? 0 : -*high, to_zero ? true : high_exclusive,
                        low ? std::optional<int64_t>(-*low) : std::nullopt, low_exclusive};
    if (auto part = non_negative_number(negative)) out.push_back(sequence({literal("-"), std::move(*part)}));
  }
  return choice(std::move(out));
}

GrammarExpr JsonGrammar::make_any_number() {
  GrammarExpr exponent = sequence({bytes(ByteSet::of_chars("eE")), optional(bytes(ByteSet::of_chars("+-"))),
                                   repeat(digit(), 1, 2)});
  GrammarExpr magnitude = choice({literal("0"), sequence({nonzero_digit(), repeat(digit(), 0, kMaxIntegerDigits - 1)})});
  return sequence({optional(literal("-")), std::move(magnitude), fraction_any(), optional(std::move(exponent))});
}

GrammarExpr JsonGrammar::value() { return rule_ref(shared(value_, "value", &JsonGrammar::make_value)); }

GrammarExpr JsonGrammar::make_value() {
  if (!any_string_) any_string_ = builder_.add("string", make_any_string());
  return choice({any_object(), any_array(), rule_ref(*any_string_), number({}), boolean(), null()});
}

GrammarExpr JsonGrammar::any_object() {
  if (!any_string_) any_string_ = builder_.add("string", make_any_string());
  GrammarExpr member = sequence({rule_ref(*any_string_), colon(), value()});
  GrammarExpr more = repeat(sequence({comma(), member}), 0, kUnbounded);
  return sequence({literal("{"), optional(sequence({member, std::move(more)})), literal("}")});
}

GrammarExpr JsonGrammar::any_array() {
  GrammarExpr more = repeat(sequence({comma(), value()}), 0, kUnbounded);
  return sequence({literal("["), optional(sequence({value(), std::move(more)})), literal("]")});
}

}  // namespace strata::grammar
