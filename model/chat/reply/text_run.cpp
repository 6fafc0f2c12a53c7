#include "model/chat/reply/text_run.h"

#include "model/chat/reply/markup_scan.h"

namespace strata {

size_t TextRun::emit(std::string_view text, bool run_ends, ReplyEventKind kind,
                     ReplyEventSink& out) {
  size_t begin = 0;
  if (at_start_) {
    begin = skip_space(text, 0);
    if (begin == text.size()) return text.size();
    at_start_ = false;
  }
  std::string_view ready = trim_trailing_space(text.substr(begin));
  if (!run_ends) ready.remove_suffix(incomplete_utf8_tail(ready));
  if (kind == ReplyEventKind::kReasoning) {
    out.reasoning(ready);
  } else {
    out.content(ready);
  }
  if (run_ends) {
    at_start_ = true;
    return text.size();
  }
  return begin + ready.size();
}

}  // namespace strata
