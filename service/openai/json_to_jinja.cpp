#include "service/openai/json_to_jinja.h"

#include <cstdint>
#include <limits>

namespace strata::openai {

jinja::Value json_to_jinja(const Json& json) {
  switch (json.type()) {
    case Json::value_t::null: return jinja::Value::none();
    case Json::value_t::boolean: return jinja::Value(json.get<bool>());
    case Json::value_t::number_integer: return jinja::Value(json.get<int64_t>());
    case Json::value_t::number_unsigned: {
      // Beyond int64 Python would still hold an int; a float is the nearest we keep.
      const uint64_t value = json.get<uint64_t>();
      if (value <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return jinja::Value(static_cast<int64_t>(value));
      }
      return jinja::Value(static_cast<double>(value));
    }
    case Json::value_t::number_float: return jinja::Value(json.get<double>());
    case Json::value_t::string: return jinja::Value(json.get<std::string>());
    case Json::value_t::array: {
      jinja::ValueList items;
      items.reserve(json.size());
      for (const Json& item : json) items.push_back(json_to_jinja(item));
      return jinja::Value::list(std::move(items));
    }
    case Json::value_t::object: {
      jinja::ValueDict entries;
      entries.reserve(json.size());
      for (const auto& [key, value] : json.items()) {
        entries.emplace_back(key, json_to_jinja(value));
      }
      return jinja::Value::dict(std::move(entries));
    }
    case Json::value_t::binary:
    case Json::value_t::discarded: break;
  }
  return jinja::Value::none();
}

}  // namespace strata::openai
