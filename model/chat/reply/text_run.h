// One run of content or reasoning text: the text between two pieces of markup (or the
// reply's ends). A run is reported with the whitespace at both of its ends trimmed — the
// newlines models write around their markup — so trailing whitespace waits until more
// text follows it. An unfinished UTF-8 character at the end waits too.
#pragma once

#include <cstddef>
#include <string_view>

#include "model/chat/reply/reply_event.h"

namespace strata {

class TextRun {
 public:
  // The next text of the run; `run_ends`: markup or the end of the reply follows it.
  // Returns the bytes consumed; the rest (held whitespace, a partial character) must be
  // offered again with what follows.
  size_t emit(std::string_view text, bool run_ends, ReplyEventKind kind, ReplyEventSink& out);

  // The next text starts a new run.
  void restart() { at_start_ = true; }

 private:
  bool at_start_ = true;
};

}  // namespace strata
