#include "model/chat/jinja/jinja_globals.h"

#include <memory>

#include "model/chat/jinja/jinja_args.h"
#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_objects.h"
#include "model/chat/jinja/jinja_python_format.h"

namespace strata::jinja {
namespace {

// Jinja2's sandbox refuses ranges longer than this.
constexpr int64_t kMaxRange = 100000;

Value call_range(const CallArgs& args) {
  if (!args.keyword.empty()) throw RenderError("range() takes no keyword arguments", 0);
  const auto& p = args.positional;
  if (p.empty() || p.size() > 3) throw RenderError("range expected at most 3 arguments, got " + std::to_string(p.size()), 0);
  const int64_t start = p.size() == 1 ? 0 : require_int(p[0], "range() argument");
  const int64_t stop = require_int(p.size() == 1 ? p[0] : p[1], "range() argument");
  const int64_t step = p.size() == 3 ? require_int(p[2], "range() argument") : 1;
  if (step == 0) throw RenderError("range() arg 3 must not be zero", 0);
  const int64_t n = step > 0 ? (stop > start ? (stop - start + step - 1) / step : 0)
                             : (start > stop ? (start - stop - step - 1) / -step : 0);
  if (n > kMaxRange) {
    throw RenderError("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).", 0);
  }
  ValueList out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out.emplace_back(start + i * step);
  return Value::list(std::move(out));
}

// dict(mapping, **kwargs) as Python builds it: later keys replace earlier ones in place.
ValueDict build_dict(const CallArgs& args, std::string_view function) {
  if (args.positional.size() > 1) throw RenderError(std::string(function) + " expected at most 1 argument", 0);
  ValueDict out;
  auto put = [&](const std::string& key, const Value& value) {
    for (auto& entry : out) {
      if (entry.first == key) {
        entry.second = value;
        return;
      }
    }
    out.emplace_back(key, value);
  };
  if (!args.positional.empty()) {
    if (!args.positional[0].is_dict()) throw RenderError(std::string(function) + " argument must be a mapping", 0);
    const Value& mapping = args.positional[0];
    for (size_t i = 0; i < mapping.as_dict().size(); ++i) {
      const Value key = mapping.dict_key(i);
      if (!key.is_string()) throw RenderError(std::string(function) + " keys must be strings here", 0);
      put(key.as_string(), mapping.as_dict()[i].second);
    }
  }
  for (const auto& [key, value] : args.keyword) put(key, value);
  return out;
}

Value call_raise_exception(const CallArgs& args) {
  BoundArgs bound("raise_exception", args, {"message"});
  throw TemplateRaised(python_str(bound.get_or(0, Value::none())), 0);
}

}  // namespace

std::optional<Value> global_function(std::string_view name, const RenderTime& now) {
  if (name == "raise_exception") return Value::function("raise_exception", call_raise_exception);
  if (name == "range") return Value::function("range", call_range);
  if (name == "namespace") {
    return Value::function("namespace", [](const CallArgs& args) {
      return Value::object(std::make_shared<Namespace>(build_dict(args, "namespace")));
    });
  }
  if (name == "dict") {
    return Value::function("dict", [](const CallArgs& args) { return Value::dict(build_dict(args, "dict")); });
  }
  if (name == "strftime_now") {
    const std::tm time = now.local_time;
    return Value::function("strftime_now", [time](const CallArgs& args) {
      BoundArgs bound("strftime_now", args, {"format"});
      if (!bound.has(0)) throw RenderError("strftime_now() missing required argument 'format'", 0);
      const std::string& format = require_string(*bound.get(0), "format");
      if (format.empty()) return Value("");
      std::string buffer(format.size() * 8 + 64, '\0');
      const size_t n = std::strftime(buffer.data(), buffer.size(), format.c_str(), &time);
      buffer.resize(n);
      return Value(std::move(buffer));
    });
  }
  return std::nullopt;
}

}  // namespace strata::jinja
