// SseParser: an incremental parser of a server-sent event stream (text/event-stream), as
// WHATWG HTML "Parsing an event stream" describes it. Feed it a response body in pieces
// of any size, split anywhere (inside a line, between \r and \n, inside a UTF-8
// character); it returns the data of each event as soon as the event is complete.
//
// From the spec: a line ends at \r\n, \n or \r; one byte-order mark at the start of the
// stream is dropped; a line starting with ':' is a comment; in "field: value" one space
// after the colon is dropped, and a line with no colon is a field with an empty value;
// "data" values are joined with "\n"; an empty line ends an event, and an event with no
// data field is not dispatched; an event the stream ends in the middle of is dropped.
// The "event", "id" and "retry" fields are read and ignored: the OpenAI stream uses none.
//
// One stream per parser; one thread at a time.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

class SseParser {
 public:
  // A client-side guard against a runaway stream: an OpenAI chunk is a few hundred bytes.
  static constexpr size_t kMaxEventBytes = 16 << 20;

  // Returns the data of each event completed by `bytes`, in order. Throws
  // std::length_error when an event grows past kMaxEventBytes.
  std::vector<std::string> feed(std::string_view bytes);

 private:
  void end_line(std::vector<std::string>& events);
  void check_size() const;

  std::string line_;             // the current line, without its end
  std::string data_;             // the current event's data lines, each followed by "\n"
  bool after_cr_ = false;        // the last line ended at \r: a \n next belongs to it
  bool at_stream_start_ = true;  // no line ended yet: a byte-order mark may lead
};

}  // namespace strata
