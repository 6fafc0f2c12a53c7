#include "model/chat/reply/json_scanner.h"

#include "model/chat/reply/json_text.h"
#include "model/chat/reply/markup_scan.h"

namespace strata {
namespace {

bool is_literal_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         c == '-' || c == '+' || c == '.';
}

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

size_t JsonScanner::scan(std::string_view text) {
  size_t n = 0;
  while (n < text.size() && state_ == State::kScanning) {
    if (!step(text[n])) break;
    ++n;
  }
  return n;
}

JsonScanner::State JsonScanner::finish() {
  if (state_ == State::kScanning && open_.empty() && !literal_.empty()) end_literal();
  return state_;
}

bool JsonScanner::step(char c) {
  if (in_string_) return step_string(c);
  if (!literal_.empty()) {
    if (is_literal_char(c)) {
      literal_ += c;
      return true;
    }
    if (!end_literal() || state_ != State::kScanning) return false;
  }
  if (is_space(c)) return true;
  switch (expect_) {
    case Expect::kValue:
      return start_value(c);
    case Expect::kValueOrClose:
      if (c == ']') {
        open_.pop_back();
        after_value();
        return true;
      }
      return start_value(c);
    case Expect::kKeyOrClose:
      if (c == '}') {
        open_.pop_back();
        after_value();
        return true;
      }
      [[fallthrough]];
    case Expect::kKey:
      if (c != '"') break;
      in_string_ = true;
      string_is_key_ = true;
      return true;
    case Expect::kColon:
      if (c != ':') break;
      expect_ = Expect::kValue;
      return true;
    case Expect::kCommaOrClose:
      if (c == ',') {
        expect_ = open_.back() == '{' ? Expect::kKey : Expect::kValue;
        return true;
      }
      if ((c == '}' && open_.back() == '{') || (c == ']' && open_.back() == '[')) {
        open_.pop_back();
        after_value();
        return true;
      }
      break;
  }
  state_ = State::kInvalid;
  return false;
}

bool JsonScanner::step_string(char c) {
  if (n_hex_left_ > 0) {
    if (!is_hex(c)) {
      state_ = State::kInvalid;
      return false;
    }
    --n_hex_left_;
    return true;
  }
  if (in_escape_) {
    in_escape_ = false;
    if (c == 'u') {
      n_hex_left_ = 4;
      return true;
    }
    if (std::string_view("\"\\/bfnrt").find(c) != std::string_view::npos) return true;
    state_ = State::kInvalid;
    return false;
  }
  if (c == '\\') {
    in_escape_ = true;
    return true;
  }
  if (static_cast<unsigned char>(c) < 0x20) {
    state_ = State::kInvalid;
    return false;
  }
  if (c == '"') {
    in_string_ = false;
    if (string_is_key_) {
      string_is_key_ = false;
      expect_ = Expect::kColon;
    } else {
      after_value();
    }
  }
  return true;
}

bool JsonScanner::start_value(char c) {
  started_ = true;
  if (c == '{' || c == '[') {
    open_ += c;
    expect_ = c == '{' ? Expect::kKeyOrClose : Expect::kValueOrClose;
    return true;
  }
  if (c == '"') {
    in_string_ = true;
    return true;
  }
  if (c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n') {
    literal_ += c;
    return true;
  }
  state_ = State::kInvalid;
  return false;
}

bool JsonScanner::end_literal() {
  const bool valid = literal_ == "true" || literal_ == "false" || literal_ == "null" ||
                     is_json_number(literal_);
  literal_.clear();
  if (!valid) {
    state_ = State::kInvalid;
    return false;
  }
  after_value();
  return true;
}

void JsonScanner::after_value() {
  if (open_.empty()) {
    state_ = State::kComplete;
  } else {
    expect_ = Expect::kCommaOrClose;
  }
}

bool is_json_value(std::string_view text) {
  JsonScanner scanner;
  const size_t n = scanner.scan(text);
  if (scanner.finish() != JsonScanner::State::kComplete) return false;
  return skip_space(text, n) == text.size();
}

}  // namespace strata
