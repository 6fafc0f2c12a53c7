// The tojson filter as transformers defines it: Python's json.dumps(x, ensure_ascii=False,
// indent=indent, separators=separators, sort_keys=sort_keys). Keys keep their order, floats
// print as Python's repr, and non-ASCII text stays raw unless ensure_ascii is set.
#pragma once

#include <optional>
#include <string>

#include "model/chat/jinja/jinja_value.h"

namespace strata::jinja {

struct JsonOptions {
  bool ensure_ascii = false;
  std::optional<std::string> indent;  // per level; none: all on one line
  std::optional<std::string> item_separator;  // default ", " (or "," when indenting)
  std::optional<std::string> key_separator;   // default ": "
  bool sort_keys = false;
};

// Throws RenderError ("Object of type Undefined is not JSON serializable") for values
// JSON cannot hold.
std::string to_json(const Value& value, const JsonOptions& options);

}  // namespace strata::jinja
