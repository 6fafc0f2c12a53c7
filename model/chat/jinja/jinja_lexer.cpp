#include "model/chat/jinja/jinja_lexer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>

#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_string_escape.h"
#include "model/chat/python_strip.h"

namespace strata::jinja {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

int count_newlines(std::string_view text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// Jinja2 normalises \r\n and \r to \n and drops one trailing newline before lexing.
std::string normalize_source(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string source) : src_(std::move(source)) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) lex_root();
    push(TokenKind::kEnd, "");
    return std::move(tokens_);
  }

 private:
  enum class Tag { kVariable, kBlock, kComment };

  void push(TokenKind kind, std::string text) {
    Token token;
    token.kind = kind;
    token.text = std::move(text);
    token.line = line_;
    tokens_.push_back(std::move(token));
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw ParseError(what + " at line " + std::to_string(line_), line_);
  }

  // Data up to the next tag, then the tag.
  void lex_root() {
    size_t start = pos_;
    size_t tag = src_.size();
    for (size_t i = src_.find('{', pos_); i != std::string::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) {
        tag = i;
        break;
      }
    }
    std::string_view text(src_.data() + start, tag - start);
    if (tag == src_.size()) {
      emit_data(text, text);
      pos_ = tag;
      return;
    }
    const Tag kind = src_[tag + 1] == '{' ? Tag::kVariable : src_[tag + 1] == '%' ? Tag::kBlock : Tag::kComment;
    const char sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
    emit_data(text, strip_before_tag(text, sign, kind != Tag::kVariable));
    pos_ = tag + 2;
    if (sign == '-' || sign == '+') ++pos_;
    if (kind == Tag::kComment) return lex_comment();
    if (kind == Tag::kBlock && lex_raw_begin()) return lex_raw_body();
    lex_tag(kind);
  }

  // Whitespace control applied to the text before a tag whose opening sign is `sign`.
  std::string_view strip_before_tag(std::string_view text, char sign, bool lstrip_applies) const {
    if (sign == '-') return python_rstrip_spaces(text);
    if (sign == '+' || !lstrip_applies) return text;
    const size_t line_start = text.rfind('\n') + 1;  // npos + 1 == 0
    if (line_start == 0 && !line_starting_) return text;
    std::string_view indent = text.substr(line_start);
    if (indent.empty() || !python_strip(indent).empty()) return text;
    return text.substr(0, line_start);
  }

  // `original` counts lines; `kept` is what is printed.
  void emit_data(std::string_view original, std::string_view kept) {
    if (!kept.empty()) push(TokenKind::kData, std::string(kept));
    line_ += count_newlines(original);
  }

  // After a tag's end: `-` eats all whitespace, trim_blocks eats one newline.
  void consume_after_end(bool minus, bool trim_newline) {
    if (minus) {
      std::string_view rest(src_.data() + pos_, src_.size() - pos_);
      const size_t n = rest.size() - python_lstrip_spaces(rest).size();
      line_ += count_newlines(rest.substr(0, n));
      pos_ += n;
    } else if (trim_newline && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
      ++line_;
    }
    line_starting_ = pos_ > 0 && src_[pos_ - 1] == '\n';
  }

  void lex_comment() {
    const size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) fail("missing end of comment tag");
    const bool minus = end > pos_ && src_[end - 1] == '-';
    const bool plus = end > pos_ && src_[end - 1] == '+';
    line_ += count_newlines(std::string_view(src_).substr(pos_, end - pos_));
    pos_ = end + 2;
    line_starting_ = false;
    consume_after_end(minus, !plus);
  }

  // At `{% raw %}` (pos_ just past "{%" and its sign): consume it and return true.
  bool lex_raw_begin() {
    size_t p = skip_spaces(pos_);
    if (src_.compare(p, 3, "raw") != 0 || (p + 3 < src_.size() && is_name_char(src_[p + 3]))) return false;
    p = skip_spaces(p + 3);
    if (src_.compare(p, 3, "-%}") == 0) {
      pos_ = p + 3;
      consume_after_end(true, false);
      return true;
    }
    if (src_.compare(p, 2, "%}") != 0) return false;
    pos_ = p + 2;  // Jinja2 does not trim the newline after {% raw %}
    line_starting_ = false;
    return true;
  }

  size_t skip_spaces(size_t p) const {
    while (p < src_.size() && (src_[p] == ' ' || src_[p] == '\t' || src_[p] == '\n')) ++p;
    return p;
  }

  // The raw body up to {% endraw %}, printed as is apart from whitespace control.
  void lex_raw_body() {
    for (size_t i = src_.find("{%", pos_); i != std::string::npos; i = src_.find("{%", i + 1)) {
      const char sign = i + 2 < src_.size() ? src_[i + 2] : '\0';
      size_t p = skip_spaces(i + 2 + (sign == '-' || sign == '+'));
      if (src_.compare(p, 6, "endraw") != 0) continue;
      p = skip_spaces(p + 6);
      const bool plus = src_.compare(p, 3, "+%}") == 0;
      const bool minus = src_.compare(p, 3, "-%}") == 0;
      if (!plus && !minus && src_.compare(p, 2, "%}") != 0) continue;
      std::string_view text(src_.data() + pos_, i - pos_);
      emit_data(text, strip_before_tag(text, sign, true));
      line_ += count_newlines(std::string_view(src_).substr(i, p - i));
      pos_ = p + (plus || minus ? 3 : 2);
      consume_after_end(minus, !plus);
      return;
    }
    fail("missing end of raw directive");
  }

  // Inside {{ }} or {% %}: tokens up to the closing delimiter.
  void lex_tag(Tag kind) {
    push(kind == Tag::kVariable ? TokenKind::kVariableBegin : TokenKind::kBlockBegin, "");
    std::vector<char> brackets;
    while (true) {
      if (pos_ >= src_.size()) fail(kind == Tag::kVariable ? "unexpected end of template, expected '}}'" : "unexpected end of template, expected '%}'");
      if (brackets.empty() && lex_tag_end(kind)) return;
      const char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        line_ += c == '\n';
        ++pos_;
      } else if (is_digit(c)) {
        lex_number();
      } else if (is_name_start(c)) {
        size_t end = pos_;
        while (end < src_.size() && is_name_char(src_[end])) ++end;
        push(TokenKind::kName, src_.substr(pos_, end - pos_));
        pos_ = end;
      } else if (c == '\'' || c == '"') {
        lex_string(c);
      } else {
        lex_operator(brackets);
      }
    }
  }

  bool lex_tag_end(Tag kind) {
    std::string_view rest(src_.data() + pos_, src_.size() - pos_);
    const std::string_view close = kind == Tag::kVariable ? "}}" : "%}";
    const bool minus = rest.size() > 2 && rest[0] == '-' && rest.substr(1, 2) == close;
    const bool plus = kind == Tag::kBlock && rest.size() > 2 && rest[0] == '+' && rest.substr(1, 2) == close;
    if (!minus && !plus && !rest.starts_with(close)) return false;
    push(kind == Tag::kVariable ? TokenKind::kVariableEnd : TokenKind::kBlockEnd, "");
    pos_ += minus || plus ? 3 : 2;
    line_starting_ = false;
    consume_after_end(minus, kind == Tag::kBlock && !plus);
    return true;
  }

  void lex_number() {
    size_t end = pos_;
    std::string digits;
    auto take_digits = [&] {
      while (end < src_.size() && (is_digit(src_[end]) || (src_[end] == '_' && end + 1 < src_.size() && is_digit(src_[end + 1])))) {
        if (src_[end] != '_') digits += src_[end];
        ++end;
      }
    };
    take_digits();
    bool is_float = false;
    if (end + 1 < src_.size() && src_[end] == '.' && is_digit(src_[end + 1]) &&
        !(pos_ > 0 && src_[pos_ - 1] == '.')) {
      is_float = true;
      digits += src_[end++];
      take_digits();
    }
    if (end < src_.size() && (src_[end] == 'e' || src_[end] == 'E')) {
      size_t exp = end + 1;
      if (exp < src_.size() && (src_[exp] == '+' || src_[exp] == '-')) ++exp;
      if (exp < src_.size() && is_digit(src_[exp])) {
        is_float = true;
        digits += 'e';
        digits += src_.substr(end + 1, exp - end - 1);
        end = exp;
        take_digits();
      }
    }
    Token token;
    token.line = line_;
    token.text = src_.substr(pos_, end - pos_);
    if (is_float) {
      token.kind = TokenKind::kFloat;
      token.float_value = std::strtod(digits.c_str(), nullptr);  // out of range: inf or 0, as Python
    } else {
      token.kind = TokenKind::kInteger;
      const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), token.int_value);
      if (result.ec != std::errc()) fail("integer literal '" + token.text + "' is out of range");
    }
    tokens_.push_back(std::move(token));
    pos_ = end;
  }

  void lex_string(char quote) {
    size_t end = pos_ + 1;
    while (end < src_.size() && src_[end] != quote) end += src_[end] == '\\' ? 2 : 1;
    if (end >= src_.size()) fail("unterminated string");
    const std::string_view body(src_.data() + pos_ + 1, end - pos_ - 1);
    push(TokenKind::kString, decode_python_escapes(body));
    line_ += count_newlines(body);
    pos_ = end + 1;
  }

  void lex_operator(std::vector<char>& brackets) {
    static constexpr std::array<std::string_view, 6> kTwoChar = {"//", "**", "==", "!=", ">=", "<="};
    static constexpr std::string_view kOneChar = "+-/*%~[](){}=<>.:|,;";
    std::string_view rest(src_.data() + pos_, src_.size() - pos_);
    for (std::string_view op : kTwoChar) {
      if (rest.starts_with(op)) {
        push(TokenKind::kOperator, std::string(op));
        pos_ += 2;
        return;
      }
    }
    const char c = rest[0];
    if (kOneChar.find(c) == std::string_view::npos) fail(std::string("unexpected char '") + c + "'");
    if (c == '(' || c == '[' || c == '{') brackets.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    if (c == ')' || c == ']' || c == '}') {
      if (brackets.empty()) fail(std::string("unexpected '") + c + "'");
      if (brackets.back() != c) fail(std::string("unexpected '") + c + "', expected '" + brackets.back() + "'");
      brackets.pop_back();
    }
    push(TokenKind::kOperator, std::string(1, c));
    ++pos_;
  }

  std::string src_;
  size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;  // the text consumed so far ends a line (Jinja2's rule)
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(normalize_source(source)).run(); }

std::string_view python_rstrip_spaces(std::string_view text) {
  const std::string_view stripped = python_strip(text);
  if (stripped.empty()) return text.substr(0, 0);
  return text.substr(0, static_cast<size_t>(stripped.data() - text.data()) + stripped.size());
}

std::string_view python_lstrip_spaces(std::string_view text) {
  const std::string_view stripped = python_strip(text);
  if (stripped.empty()) return text.substr(text.size());
  return text.substr(static_cast<size_t>(stripped.data() - text.data()));
}

}  // namespace strata::jinja
