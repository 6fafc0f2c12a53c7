// GenerateRequest and EngineEvent: what goes into the Engine and what comes
// back out, as plain structs (no JSON below service/). The service fills a
// GenerateRequest from the HTTP body after tokenizing; the engine answers
// with a stream of EngineEvents, the last of which carries the finish reason
// and the usage.
//
// Threads: plain data; built on any thread, then owned by the engine thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/sampler/sampler.h"
#include "kernels/sampling/sampling_params.h"
#include "model/tokenizer/vocab.h"

namespace strata {

// Scheduling class: every waiting interactive request is admitted before any
// batch one, and batch sequences are preempted first.
enum class Priority { kInteractive = 0, kBatch = 1 };

// Every field has a default, so designated initializers may omit any of them.
struct GenerateRequest {
  std::vector<TokenId> prompt{};    // >= 1 token, every id in the vocabulary
  SamplingParams sampling{};        // must validate()
  int64_t max_tokens = 256;         // >= 1; prompt.size() + max_tokens <= context length
  std::vector<std::string> stop{};  // stop strings; the text before the first match is kept
  Priority priority = Priority::kInteractive;
  bool logprobs = false;    // report each token's logprob (and sampling.n_logprobs alternatives)
  bool ignore_eos = false;  // benchmarks: always run max_tokens
  // Control tokens appear in the text as what they stand for ("<|channel|>"), for replies
  // whose markup is made of them (tool calls, reasoning channels); off, they add nothing.
  // End-of-generation tokens never appear.
  bool render_special_tokens = false;
};

enum class FinishReason { kStop, kLength, kCancelled, kError };
std::string_view finish_reason_name(FinishReason finish);  // "stop", "length", "cancelled", "error"

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t cached_prompt_tokens = 0;  // of prompt_tokens, served from the prefix cache
  int64_t completion_tokens = 0;     // generated, an end-of-generation token included
};

// One step's news for one request. A request gets at most one event per
// engine step; the last one has `finish` set (and no event follows it).
struct EngineEvent {
  uint64_t request_id = 0;
  std::string text;                    // new text: whole UTF-8 characters, stop strings cut
  std::vector<TokenId> token_ids;      // tokens sampled since the last event (0 or 1)
  std::vector<SampledToken> logprobs;  // one per token_ids entry when request.logprobs
  std::optional<FinishReason> finish;  // set on the final event only
  // On a final kStop event: the index in GenerateRequest::stop of the stop string that
  // ended the text; -1 where an end-of-generation token did.
  int matched_stop = -1;
  std::string error;                   // when finish == kError: what went wrong
  Usage usage;                         // valid on the final event
};

}  // namespace strata
