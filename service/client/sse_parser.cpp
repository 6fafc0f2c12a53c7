#include "service/client/sse_parser.h"

#include <stdexcept>

#include "common/str_cat.h"

namespace strata {

std::vector<std::string> SseParser::feed(std::string_view bytes) {
  std::vector<std::string> events;
  size_t i = 0;
  while (i < bytes.size()) {
    if (after_cr_) {
      after_cr_ = false;
      if (bytes[i] == '\n') {
        ++i;
        continue;
      }
    }
    size_t end = bytes.find_first_of("\r\n", i);
    if (end == std::string_view::npos) {
      line_.append(bytes.substr(i));
      check_size();
      break;
    }
    line_.append(bytes.substr(i, end - i));
    after_cr_ = bytes[end] == '\r';
    i = end + 1;
    end_line(events);
  }
  return events;
}

void SseParser::end_line(std::vector<std::string>& events) {
  if (at_stream_start_) {
    at_stream_start_ = false;
    if (line_.starts_with("\xEF\xBB\xBF")) line_.erase(0, 3);
  }
  if (line_.empty()) {
    // Dispatch: the spec drops the last "\n", and an event without data.
    if (!data_.empty()) {
      data_.pop_back();
      events.push_back(std::move(data_));
    }
    data_.clear();
    return;
  }
  if (line_[0] != ':') {
    size_t colon = line_.find(':');
    std::string_view field = std::string_view(line_).substr(0, colon);
    if (field == "data") {
      std::string_view value;
      if (colon != std::string::npos) {
        value = std::string_view(line_).substr(colon + 1);
        if (value.starts_with(' ')) value.remove_prefix(1);
      }
      data_.append(value);
      data_.push_back('\n');
    }
  }
  line_.clear();
  check_size();
}

void SseParser::check_size() const {
  if (line_.size() + data_.size() > kMaxEventBytes) {
    throw std::length_error(
        str_cat("a server-sent event is larger than ", kMaxEventBytes, " bytes"));
  }
}

}  // namespace strata
