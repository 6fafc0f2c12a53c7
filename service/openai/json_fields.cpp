#include "service/openai/json_fields.h"

#include <cmath>
#include <utility>

namespace strata::openai {

void throw_bad_request(std::string message, std::string param) {
  throw BadRequest{invalid_request(std::move(message), std::move(param))};
}

const Json* find_field(const Json& object, std::string_view key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<bool> read_bool(const Json* value, const std::string& param) {
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) throw_bad_request(param + " must be a boolean", param);
  return value->get<bool>();
}

std::optional<double> read_number(const Json* value, const std::string& param) {
  if (value == nullptr) return std::nullopt;
  if (!value->is_number()) throw_bad_request(param + " must be a number", param);
  return value->get<double>();
}

std::optional<int64_t> read_integer(const Json* value, const std::string& param) {
  if (value == nullptr) return std::nullopt;
  if (value->is_number_unsigned()) {
    uint64_t u = value->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) throw_bad_request(param + " is too large", param);
    return static_cast<int64_t>(u);
  }
  if (value->is_number_integer()) return value->get<int64_t>();
  if (value->is_number_float()) {
    double d = value->get<double>();
    // 2^63 is the first double above INT64_MAX.
    if (std::isfinite(d) && d == std::trunc(d) && d >= -9.2233720368547758e18 &&
        d < 9.2233720368547758e18) {
      return static_cast<int64_t>(d);
    }
  }
  throw_bad_request(param + " must be an integer", param);
}

std::optional<std::string> read_string(const Json* value, const std::string& param) {
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) throw_bad_request(param + " must be a string", param);
  return value->get<std::string>();
}

std::variant<Json, ApiError> parse_json_body(std::string_view body) {
  Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return invalid_request(
        "We could not parse the JSON body of your request. The body must be valid JSON.");
  }
  if (!json.is_object()) return invalid_request("The request body must be a JSON object.");
  return json;
}

}  // namespace strata::openai
