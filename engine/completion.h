// run_to_completion: one request through an Engine, waited for — what
// `strata run`, `strata bench` and the tests that want a whole answer use.
// A single prompt is not a second generation loop: it is an Engine with one
// request.
//
// Threads: blocks the calling thread (not the engine's) until the request's
// last event; on_text runs on the engine thread and must not block.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "engine/generate_request.h"

namespace strata {

struct Completion {
  std::vector<TokenId> tokens;         // generated, an end-of-generation token included
  std::vector<SampledToken> logprobs;  // one per token when request.logprobs
  std::string text;                    // decoded, cut at a stop string
  FinishReason finish = FinishReason::kCancelled;
  std::string error;  // finish == kError: what went wrong
  Usage usage;
  double first_token_seconds = 0;  // submit to the first token: the prefill
  double decode_seconds = 0;       // the first token to the last
};

// Submits `request` and returns when it finishes. Throws std::invalid_argument
// for a request outside engine.limits(). on_text, when set, receives each
// piece of text as it becomes final; setting *cancel cancels the request
// (checked every few milliseconds).
Completion run_to_completion(Engine& engine, GenerateRequest request,
                             const std::function<void(std::string_view text)>& on_text = nullptr,
                             const std::atomic<bool>* cancel = nullptr);

}  // namespace strata
