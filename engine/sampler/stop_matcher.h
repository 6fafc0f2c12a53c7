// StopMatcher: finds the request's stop strings in a sequence's text as it streams out,
// and says how much of the text is safe to send now.
//
// Text that could be the start of a stop string is held back until the next delta
// settles it: either the stop string completes (the held text is never sent) or it
// cannot (the held text is released). When a stop string completes, the text before it is
// the last text of the generation; the stop string itself is not sent (OpenAI's
// behaviour). Matching is on bytes, across any number of deltas.
//
// The result does not depend on how the text is cut into deltas: the stop is where a stop
// string first ends, as if the text came one byte at a time; among stop strings that end
// there together, the longest (the one starting first) is cut.
//
// UTF-8: StreamDecoder's deltas are whole characters, and held text starts where a stop
// string starts, so with stop strings that are valid UTF-8 every released text is whole
// characters too. (The split is also never placed on a continuation byte.)
//
// One matcher per sequence, used by one thread at a time.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

struct StopMatchResult {
  std::string text;       // safe to send now (may be empty)
  bool stopped = false;   // a stop string completed: `text` is the last text to send
  int matched_stop = -1;  // when stopped: index of the stop string in the list given
};

class StopMatcher {
 public:
  // Empty stop strings are ignored (they would match everywhere).
  explicit StopMatcher(std::vector<std::string> stop_strings);

  // The next decoded text of the sequence. Must not be called once stopped.
  StopMatchResult feed(std::string_view delta);

  // End of the generation (length limit, end-of-sequence token): the held-back text,
  // which is no stop string. Empty once stopped.
  std::string flush();

  bool stopped() const { return stopped_; }

 private:
  // How many trailing bytes of pending_ are a proper prefix of some stop string.
  size_t held_back_size() const;

  std::vector<std::string> stop_strings_;  // as given, empty ones included (for indices)
  std::string pending_;  // text fed but not yet released: a stop-string prefix, or empty
  bool stopped_ = false;
};

}  // namespace strata
