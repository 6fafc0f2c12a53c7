// An incremental JSON syntax checker for one value, fed bytes as a model writes them.
// It decides, byte by byte, how much of the text is still a valid JSON prefix and
// where the value ends, so arguments can be streamed on as soon as they are written
// without a JSON library (none is allowed below service/).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace strata {

class JsonScanner {
 public:
  enum class State {
    kScanning,  // a valid prefix; the value goes on
    kComplete,  // the value ended (bytes after it are not consumed)
    kInvalid,   // the byte after the consumed ones can never continue the value
  };

  // Consumes bytes of `text` until the value completes or the next byte is invalid;
  // returns how many. Leading whitespace is consumed; a top-level number or literal
  // ends at the first byte that cannot continue it.
  size_t scan(std::string_view text);

  // At the end of all input: completes a top-level number or literal still open
  // (e.g. "42"). Returns the state after.
  State finish();

  State state() const { return state_; }
  // Whether nothing but whitespace has been consumed.
  bool started() const { return started_; }

 private:
  enum class Expect { kValue, kValueOrClose, kKeyOrClose, kKey, kColon, kCommaOrClose };

  bool step(char c);  // false: `c` is not consumed
  bool step_string(char c);
  bool start_value(char c);
  bool end_literal();
  void after_value();

  State state_ = State::kScanning;
  Expect expect_ = Expect::kValue;
  std::string open_;  // the open containers, '{' or '[', outermost first
  bool started_ = false;
  bool in_string_ = false;
  bool string_is_key_ = false;
  bool in_escape_ = false;
  int n_hex_left_ = 0;   // hex digits still due in a \uXXXX escape
  std::string literal_;  // the number, true, false or null being read
};

// Whether `text` is one complete JSON value, with optional surrounding whitespace.
bool is_json_value(std::string_view text);

}  // namespace strata
