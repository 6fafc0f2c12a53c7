// GenerationOptions: the fields /v1/chat/completions and /v1/completions share (model,
// length, sampling, stop, streaming), read from a request body and validated.
//
// Pure functions: any thread (the service parses on its Asio threads).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/sampling/sampling_params.h"
#include "service/openai/json_fields.h"

namespace strata::openai {

struct GenerationOptions {
  std::string model;                  // as the client sent it; empty when absent
  // nullopt: up to the end of the context. Held to the request limits
  // (engine/request_limits.h) with the prompt; max_tokens_key names the field.
  std::optional<int64_t> max_tokens;
  std::string max_tokens_key = "max_tokens";  // or "max_completion_tokens"
  // Validated (SamplingParams::validate()). n_logprobs is top_logprobs (chat) or
  // logprobs (completions). seed stays 0 here: see `seed`.
  SamplingParams sampling;
  std::optional<uint64_t> seed;  // nullopt: the service picks one (a negative seed wraps)
  std::vector<std::string> stop;  // <= kMaxStop, none empty
  bool logprobs = false;          // report each sampled token's logprob
  bool stream = false;            // answer as server-sent events
  bool include_usage = false;     // stream_options.include_usage: a final usage chunk
  bool ignore_eos = false;        // vLLM's extension: always generate max_tokens

  // OpenAI allows 4 stop sequences; we allow more, as vLLM does, up to this.
  static constexpr size_t kMaxStop = 16;
};

// Reads every shared field but the logprob ones (their shapes differ by endpoint; the
// caller sets logprobs and sampling.n_logprobs, then calls validate_sampling). Unknown
// fields are ignored. Throws BadRequest (json_fields.h) for a field of the wrong type or
// out of range, including n != 1.
GenerationOptions read_generation_options(const Json& body);

// Throws BadRequest when options.sampling does not validate, naming the field.
void validate_sampling(const GenerationOptions& options);

}  // namespace strata::openai
