#include "service/openai/generation_options.h"

#include "common/str_cat.h"
#include "service/openai/json_fields.h"

namespace strata::openai {
namespace {

void read_float(const Json& body, const char* key, float& out) {
  if (auto value = read_number(find_field(body, key), key)) out = static_cast<float>(*value);
}

// A string, or an array of strings.
std::vector<std::string> read_stop(const Json* value) {
  std::vector<std::string> stop;
  if (value == nullptr) return stop;
  if (value->is_string()) {
    stop.push_back(value->get<std::string>());
  } else if (value->is_array()) {
    for (const Json& item : *value) {
      if (!item.is_string())
        throw_bad_request("stop must be a string or an array of strings", "stop");
      stop.push_back(item.get<std::string>());
    }
  } else {
    throw_bad_request("stop must be a string or an array of strings", "stop");
  }
  if (stop.size() > GenerationOptions::kMaxStop) {
    throw_bad_request(str_cat("stop may hold at most ", GenerationOptions::kMaxStop,
                              " sequences, got ", stop.size()),
                      "stop");
  }
  for (const std::string& s : stop) {
    if (s.empty()) throw_bad_request("stop sequences must not be empty", "stop");
  }
  return stop;
}

}  // namespace

GenerationOptions read_generation_options(const Json& body) {
  GenerationOptions options;
  options.model = read_string(find_field(body, "model"), "model").value_or("");

  if (auto n = read_integer(find_field(body, "n"), "n")) {
    if (*n > 1) throw_bad_request("n > 1 is not supported", "n");
    if (*n < 1) throw_bad_request(str_cat("n must be 1, got ", *n), "n");
  }

  // max_completion_tokens is the newer name; it wins when both are given.
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (auto max_tokens = read_integer(find_field(body, key), key)) {
      options.max_tokens = *max_tokens;
      options.max_tokens_key = key;
    }
  }

  read_float(body, "temperature", options.sampling.temperature);
  read_float(body, "top_p", options.sampling.top_p);
  read_float(body, "min_p", options.sampling.min_p);
  read_float(body, "frequency_penalty", options.sampling.frequency_penalty);
  read_float(body, "presence_penalty", options.sampling.presence_penalty);
  read_float(body, "repetition_penalty", options.sampling.repetition_penalty);
  if (auto top_k = read_integer(find_field(body, "top_k"), "top_k")) {
    // vLLM's -1 and 0 both mean "off".
    if (*top_k < -1 || *top_k > INT32_MAX) {
      throw_bad_request(str_cat("top_k must be -1, 0 (off) or a positive count, got ", *top_k),
                        "top_k");
    }
    options.sampling.top_k = static_cast<int32_t>(*top_k < 0 ? 0 : *top_k);
  }
  if (auto seed = read_integer(find_field(body, "seed"), "seed")) {
    options.seed = static_cast<uint64_t>(*seed);
  }

  options.stop = read_stop(find_field(body, "stop"));
  options.stream = read_bool(find_field(body, "stream"), "stream").value_or(false);
  if (const Json* stream_options = find_field(body, "stream_options")) {
    if (!stream_options->is_object()) {
      throw_bad_request("stream_options must be an object", "stream_options");
    }
    options.include_usage = read_bool(find_field(*stream_options, "include_usage"),
                                      "stream_options.include_usage")
                                .value_or(false);
  }
  options.ignore_eos = read_bool(find_field(body, "ignore_eos"), "ignore_eos").value_or(false);
  return options;
}

void validate_sampling(const GenerationOptions& options) {
  if (auto message = options.sampling.validate()) {
    // validate() starts its message with the field's OpenAI name.
    throw_bad_request(*message, message->substr(0, message->find(' ')));
  }
}

}  // namespace strata::openai
