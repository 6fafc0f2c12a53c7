#include "engine/sampler/stop_matcher.h"

#include <algorithm>
#include <utility>

#include "common/check.h"

namespace strata {
namespace {

bool is_utf8_continuation(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

}  // namespace

StopMatcher::StopMatcher(std::vector<std::string> stop_strings)
    : stop_strings_(std::move(stop_strings)) {}

StopMatchResult StopMatcher::feed(std::string_view delta) {
  STRATA_CHECK(!stopped_, "StopMatcher fed after it stopped");
  pending_.append(delta);

  // The stop string that ends first in pending_ (ties: the one starting first). A string's
  // first occurrence is its earliest end, so one find() per string suffices. pending_ held
  // no complete stop string before this delta, so any match involves the delta.
  size_t best_start = std::string::npos;
  size_t best_end = std::string::npos;
  int best_index = -1;
  for (size_t i = 0; i < stop_strings_.size(); ++i) {
    const std::string& stop = stop_strings_[i];
    if (stop.empty()) continue;
    const size_t start = pending_.find(stop);
    if (start == std::string::npos) continue;
    const size_t end = start + stop.size();
    if (end < best_end || (end == best_end && start < best_start)) {
      best_start = start;
      best_end = end;
      best_index = static_cast<int>(i);
    }
  }

  StopMatchResult result;
  if (best_index >= 0) {
    result.text = pending_.substr(0, best_start);
    result.stopped = true;
    result.matched_stop = best_index;
    pending_.clear();
    stopped_ = true;
    return result;
  }

  size_t split = pending_.size() - held_back_size();
  while (split > 0 && split < pending_.size() && is_utf8_continuation(pending_[split])) --split;
  result.text = pending_.substr(0, split);
  pending_.erase(0, split);
  return result;
}

std::string StopMatcher::flush() {
  std::string rest = std::move(pending_);
  pending_.clear();
  return rest;
}

size_t StopMatcher::held_back_size() const {
  const std::string_view text = pending_;
  size_t held = 0;
  for (const std::string& stop : stop_strings_) {
    if (stop.empty()) continue;
    // Longest first; a proper prefix only, since a whole stop string would have matched.
    for (size_t n = std::min(text.size(), stop.size() - 1); n > held; --n) {
      if (text.ends_with(std::string_view(stop).substr(0, n))) {
        held = n;
        break;
      }
    }
  }
  return held;
}

}  // namespace strata
