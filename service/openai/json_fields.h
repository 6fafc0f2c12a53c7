// Typed reads of an OpenAI request body's fields, for the request parsers. A missing
// field and a JSON null both read as absent (clients send null for "default"); a field of
// the wrong type throws BadRequest, an ApiError 400 naming the field. The parsers catch
// BadRequest and return the ApiError: it never leaves them.
//
// Pure functions: any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "service/openai/openai_error.h"

namespace strata::openai {

// Request and response bodies keep their keys in the order the client wrote them, as
// Python's dicts do: a tool's JSON schema reaches the chat template as it was sent.
using Json = nlohmann::ordered_json;

struct BadRequest {
  ApiError error;
};

// Throws BadRequest(invalid_request(message, param)).
[[noreturn]] void throw_bad_request(std::string message, std::string param);

// The field `key` of `object` (an object), or nullptr when it is missing or null.
const Json* find_field(const Json& object, std::string_view key);

// `param` names the field in errors (may be a path: "stream_options.include_usage").
std::optional<bool> read_bool(const Json* value, const std::string& param);
// A JSON number; integers are accepted.
std::optional<double> read_number(const Json* value, const std::string& param);
// A JSON integer, or a number with an integral value (5.0), within int64.
std::optional<int64_t> read_integer(const Json* value, const std::string& param);
std::optional<std::string> read_string(const Json* value, const std::string& param);

// The request body as JSON: an object, or a 400 ("We could not parse the JSON body...").
std::variant<Json, ApiError> parse_json_body(std::string_view body);

}  // namespace strata::openai
