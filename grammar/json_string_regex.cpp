#include "grammar/json_string_regex.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "common/str_cat.h"

namespace strata::grammar {
namespace {

constexpr uint32_t kMaxRepeat = 1000;  // {n,m} bounds past this are refused

uint32_t add_lengths(uint32_t a, uint32_t b) {
  return (a == kUnbounded || b == kUnbounded) ? kUnbounded : a + b;
}
uint32_t multiply_length(uint32_t a, uint32_t n) {
  if (n == 0) return 0;
  return (a == kUnbounded || n == kUnbounded) ? kUnbounded : a * n;
}

struct Piece {
  GrammarExpr expr;
  uint32_t min_chars = 0;
  uint32_t max_chars = 0;
};

// A set of decoded characters: ASCII by bitmap, non-ASCII as "all" or listed ones.
struct CharClass {
  std::vector<bool> ascii = std::vector<bool>(128, false);
  bool any_non_ascii = false;
  bool without_u2000_block = false;
  std::vector<std::string> non_ascii;  // UTF-8 of listed characters
};

class RegexParser {
 public:
  RegexParser(std::string_view pattern, JsonGrammar& json) : pattern_(pattern), json_(json) {}

  JsonStringRegex parse() {
    bool anchored_start = !pattern_.empty() && pattern_[0] == '^';
    size_t end = pattern_.size();
    bool anchored_end = end > (anchored_start ? 1 : 0) && pattern_[end - 1] == '$' && !escaped_at(end - 1);
    if (anchored_start) pos_ = 1;
    end_ = anchored_end ? end - 1 : end;
    Piece body = alternation();
    if (pos_ != end_) fail("unexpected ')'");
    if (has_top_alternation_ && (anchored_start || anchored_end)) {
      fail_at(0, "anchors around a top-level '|' (group the alternatives: ^(a|b)$)");
    }
    std::vector<GrammarExpr> parts;
    auto anything = [&] { return repeat(json_.string_char(), 0, kUnbounded); };
    if (!anchored_start) parts.push_back(anything());
    parts.push_back(std::move(body.expr));
    if (!anchored_end) parts.push_back(anything());
    bool exact = anchored_start && anchored_end;
    return JsonStringRegex{sequence(std::move(parts)), body.min_chars,
                           exact ? body.max_chars : kUnbounded};
  }

 private:
  bool escaped_at(size_t index) const {
    size_t backslashes = 0;
    while (index > backslashes && pattern_[index - 1 - backslashes] == '\\') ++backslashes;
    return backslashes % 2 == 1;
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }
  [[noreturn]] void fail_at(size_t at, const std::string& what) const {
    throw std::invalid_argument(str_cat("pattern: unsupported or invalid regex at offset ", at,
                                        ": ", what));
  }
  bool done() const { return pos_ >= end_; }
  char peek() const { return pattern_[pos_]; }

  Piece alternation() {
    std::vector<Piece> options{concatenation()};
    while (!done() && peek() == '|') {
      if (depth_ == 0) has_top_alternation_ = true;
      ++pos_;
      options.push_back(concatenation());
    }
    if (options.size() == 1) return std::move(options[0]);
    Piece out{GrammarExpr{}, kUnbounded, 0};
    std::vector<GrammarExpr> exprs;
    for (Piece& option : options) {
      out.min_chars = std::min(out.min_chars, option.min_chars);
      out.max_chars = std::max(out.max_chars, option.max_chars);
      exprs.push_back(std::move(option.expr));
    }
    out.expr = choice(std::move(exprs));
    return out;
  }

  Piece concatenation() {
    Piece out{empty(), 0, 0};
    std::vector<GrammarExpr> exprs;
    while (!done() && peek() != '|' && peek() != ')') {
      Piece item = quantified(atom());
      out.min_chars = add_lengths(out.min_chars, item.min_chars);
      out.max_chars = add_lengths(out.max_chars, item.max_chars);
      exprs.push_back(std::move(item.expr));
    }
    out.expr = sequence(std::move(exprs));
    return out;
  }

  uint32_t number() {
    size_t start = pos_;
    uint64_t value = 0;
    while (!done() && peek() >= '0' && peek() <= '9') {
      value = value * 10 + static_cast<uint64_t>(peek() - '0');
      if (value > kMaxRepeat) fail_at(start, str_cat("repetition count above ", kMaxRepeat));
      ++pos_;
    }
    if (pos_ == start) fail("expected a number in {}");
    return static_cast<uint32_t>(value);
  }

  Piece quantified(Piece item) {
    if (done()) return item;
    uint32_t low = 0, high = 0;
    switch (peek()) {
      case '?': low = 0; high = 1; ++pos_; break;
      case '*': low = 0; high = kUnbounded; ++pos_; break;
      case '+': low = 1; high = kUnbounded; ++pos_; break;
      case '{': {
        ++pos_;
        low = number();
        high = low;
        if (!done() && peek() == ',') {
          ++pos_;
          high = (!done() && peek() == '}') ? kUnbounded : number();
        }
        if (done() || peek() != '}') fail("expected '}'");
        ++pos_;
        if (high < low) fail("{n,m} with n > m");
        break;
      }
      default:
        return item;
    }
    if (!done() && peek() == '?') ++pos_;  // lazy: the same strings
    if (!done() && (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{')) {
      fail("a quantifier after a quantifier");
    }
    return Piece{repeat(std::move(item.expr), low, high), multiply_length(item.min_chars, low),
                 multiply_length(item.max_chars, high)};
  }

  Piece one_char(GrammarExpr expr) { return Piece{std::move(expr), 1, 1}; }

  Piece atom() {
    char c = peek();
    switch (c) {
      case '(': return group();
      case '[': return one_char(class_expr(char_class()));
      case '.': {
        ++pos_;
        CharClass dot;
        std::fill(dot.ascii.begin(), dot.ascii.end(), true);
        dot.ascii['\n'] = dot.ascii['\r'] = false;
        dot.any_non_ascii = true;
        dot.without_u2000_block = true;
        return one_char(class_expr(dot));
      }
      case '\\': {
        CharClass set = escape(/*in_class=*/false);
        return one_char(class_expr(set));
      }
      case '^': case '$': fail("an anchor inside the pattern");
      case '*': case '+': case '?': case '{': fail("a quantifier with nothing to repeat");
      default: {
        std::string character = utf8_char();
        return one_char(literal(json_escape(character)));
      }
    }
  }

  Piece group() {
    size_t start = pos_++;
    if (!done() && peek() == '?') {
      if (pos_ + 1 < end_ && pattern_[pos_ + 1] == ':') {
        pos_ += 2;
      } else {
        fail_at(start, "lookaround and named groups");
      }
    }
    ++depth_;
    Piece inner = alternation();
    --depth_;
    if (done() || peek() != ')') fail_at(start, "unclosed '('");
    ++pos_;
    return inner;
  }

  std::string utf8_char() {
    size_t start = pos_;
    auto lead = static_cast<unsigned char>(pattern_[pos_++]);
    size_t extra = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC0 ? 1 : 0;
    if (lead >= 0x80 && lead < 0xC0) fail_at(start, "malformed UTF-8");
    for (size_t i = 0; i < extra; ++i, ++pos_) {
      if (done() || (static_cast<unsigned char>(peek()) & 0xC0) != 0x80) fail_at(start, "malformed UTF-8");
    }
    return std::string(pattern_.substr(start, pos_ - start));
  }

  static void add_ascii(CharClass& set, char first, char last) {
    for (int b = first; b <= last; ++b) set.ascii[static_cast<size_t>(b)] = true;
  }

  static CharClass negated(const CharClass& set) {
    CharClass out;
    for (size_t b = 0; b < 128; ++b) out.ascii[b] = !set.ascii[b];
    out.any_non_ascii = !set.any_non_ascii;
    return out;
  }

  // The character or class after a backslash.
  CharClass escape(bool in_class) {
    size_t start = pos_++;
    if (done()) fail_at(start, "a trailing backslash");
    char c = pattern_[pos_++];
    CharClass set;
    auto single = [&](char value) { set.ascii[static_cast<unsigned char>(value)] = true; };
    switch (c) {
      case 'd': add_ascii(set, '0', '9'); return set;
      case 'D': { add_ascii(set, '0', '9'); return negated(set); }
      case 'w': add_ascii(set, 'a', 'z'); add_ascii(set, 'A', 'Z'); add_ascii(set, '0', '9'); single('_'); return set;
      case 'W': { add_ascii(set, 'a', 'z'); add_ascii(set, 'A', 'Z'); add_ascii(set, '0', '9'); single('_');
                  return negated(set); }
      case 's': for (char s : std::string_view(" \t\n\r\f\v")) single(s); return set;
      case 'S': { for (char s : std::string_view(" \t\n\r\f\v")) single(s);
                  CharClass out = negated(set);
                  out.any_non_ascii = false;  // ECMA-262 \s holds non-ASCII spaces: leave them all out
                  return out; }
      case 'n': single('\n'); return set;
      case 't': single('\t'); return set;
      case 'r': single('\r'); return set;
      case 'f': single('\f'); return set;
      case 'v': single('\v'); return set;
      case '0': single('\0'); return set;
      case 'u': return unicode_escape(start, set);
      case 'b':
        if (in_class) { single('\b'); return set; }
        fail_at(start, "word boundaries (\\b)");
      default:
        if (std::string_view("\\/.^$|?*+()[]{}-").find(c) != std::string_view::npos) {
          single(c);
          return set;
        }
        fail_at(start, str_cat("the escape \\", c));
    }
  }

  CharClass unicode_escape(size_t start, CharClass set) {
    if (pos_ + 4 > end_) fail_at(start, "\\u needs four hex digits");
    uint32_t code = 0;
    for (int i = 0; i < 4; ++i) {
      char h = pattern_[pos_++];
      int value = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                  : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
      if (value < 0) fail_at(start, "\\u needs four hex digits");
      code = code * 16 + static_cast<uint32_t>(value);
    }
    if (code >= 0xD800 && code <= 0xDFFF) fail_at(start, "surrogate escapes");
    if (code < 0x80) {
      set.ascii[code] = true;
    } else if (code < 0x800) {
      set.non_ascii.push_back({static_cast<char>(0xC0 | (code >> 6)), static_cast<char>(0x80 | (code & 0x3F))});
    } else {
      set.non_ascii.push_back({static_cast<char>(0xE0 | (code >> 12)), static_cast<char>(0x80 | ((code >> 6) & 0x3F)),
                               static_cast<char>(0x80 | (code & 0x3F))});
    }
    return set;
  }

  // One member of a [...] class: a character (ASCII or UTF-8) or an escape.
  CharClass class_member(std::string& single_char) {
    single_char.clear();
    if (peek() == '\\') {
      CharClass set = escape(/*in_class=*/true);
      if (std::count(set.ascii.begin(), set.ascii.end(), true) == 1 && set.non_ascii.empty() && !set.any_non_ascii) {
        single_char = std::string(1, static_cast<char>(std::find(set.ascii.begin(), set.ascii.end(), true) - set.ascii.begin()));
      }
      return set;
    }
    CharClass set;
    std::string character = utf8_char();
    if (character.size() == 1) {
      set.ascii[static_cast<unsigned char>(character[0])] = true;
    } else {
      set.non_ascii.push_back(character);
    }
    single_char = character;
    return set;
  }

  CharClass char_class() {
    size_t start = pos_++;
    bool negate = !done() && peek() == '^';
    if (negate) ++pos_;
    CharClass set;
    bool first = true;
    while (!done() && (peek() != ']' || first)) {
      first = false;
      std::string low_char;
      CharClass member = class_member(low_char);
      if (!done() && peek() == '-' && pos_ + 1 < end_ && pattern_[pos_ + 1] != ']') {
        ++pos_;
        std::string high_char;
        class_member(high_char);
        if (low_char.size() != 1 || high_char.size() != 1) fail_at(start, "ranges other than ASCII literals");
        if (low_char[0] > high_char[0]) fail_at(start, "a range out of order");
        add_ascii(set, low_char[0], high_char[0]);
        continue;
      }
      for (size_t b = 0; b < 128; ++b) set.ascii[b] = set.ascii[b] || member.ascii[b];
      set.any_non_ascii = set.any_non_ascii || member.any_non_ascii;
      set.non_ascii.insert(set.non_ascii.end(), member.non_ascii.begin(), member.non_ascii.end());
    }
    if (done()) fail_at(start, "unclosed '['");
    ++pos_;
    if (negate) {
      if (!set.non_ascii.empty()) fail_at(start, "a negated class that lists non-ASCII characters");
      return negated(set);
    }
    return set;
  }

  // The JSON contents forms of a set's characters.
  GrammarExpr class_expr(const CharClass& set) {
    std::vector<GrammarExpr> options;
    ByteSet plain;
    for (size_t b = 0; b < 128; ++b) {
      if (!set.ascii[b]) continue;
      std::string escaped = json_escape(std::string(1, static_cast<char>(b)));
      if (escaped.size() == 1) {
        plain.insert(static_cast<uint8_t>(b));
      } else {
        options.push_back(literal(escaped));
      }
    }
    if (!plain.empty()) options.push_back(bytes(plain));
    if (set.any_non_ascii) options.push_back(json_.non_ascii_char(set.without_u2000_block));
    for (const std::string& character : set.non_ascii) options.push_back(literal(character));
    if (options.empty()) fail("a class that matches nothing");
    return choice(std::move(options));
  }

  std::string_view pattern_;
  JsonGrammar& json_;
  size_t pos_ = 0;
  size_t end_ = 0;
  int depth_ = 0;
  bool has_top_alternation_ = false;
};

}  // namespace

JsonStringRegex compile_json_string_regex(std::string_view pattern, JsonGrammar& json) {
  return RegexParser(pattern, json).parse();
}

}  // namespace strata::grammar
