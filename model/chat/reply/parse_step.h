// The result of one step of an incremental parser over the text not yet consumed.
//
// Every step looks at the unconsumed text from its start, so a decision never depends on
// where the model's text was cut into chunks: a step that cannot decide yet consumes
// what is certain and asks for more.
#pragma once

#include <cstddef>

namespace strata {

enum class StepStatus {
  kNeedMore,  // nothing more can be decided until more text comes (or the end)
  kProgress,  // step again
  kDone,      // the construct ended; the rest of the text is not its own
  kRejected,  // not this construct after all: nothing was consumed or reported
  kBroken,    // malformed after something was reported: it ends here, the rest is text
};

struct ParseStep {
  size_t consumed = 0;  // bytes of the text given to the step
  StepStatus status = StepStatus::kNeedMore;
};

}  // namespace strata
