// The parts of one OpenAI streaming chunk that a command shows: the text of
// chat.completion.chunk (choices[0].delta.content) or text_completion (choices[0].text),
// the finish reason, and the usage of the last chunk (with stream_options.include_usage).
//
// Pure function: any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace strata {

struct StreamChunk {
  std::string text;                          // "" when the chunk carries none
  std::optional<std::string> finish_reason;  // "stop", "length", ... on the finishing chunk
  std::optional<nlohmann::json> usage;       // {"prompt_tokens", "completion_tokens", ...}
};

// Fields that are missing, null or of another type read as absent.
StreamChunk read_stream_chunk(const nlohmann::json& chunk);

}  // namespace strata
