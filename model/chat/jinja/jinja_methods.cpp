#include "model/chat/jinja/jinja_methods.h"

#include <array>
#include <string>

#include "model/chat/jinja/jinja_args.h"
#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_operators.h"
#include "model/chat/jinja/jinja_python_format.h"
#include "model/chat/jinja/jinja_str_format.h"
#include "model/chat/jinja/jinja_text.h"
#include "model/chat/jinja/jinja_utf8.h"

namespace strata::jinja {
namespace {

constexpr std::array<std::string_view, 9> kListMutators = {"append", "clear", "extend", "insert", "pop", "remove",
                                                           "reverse", "sort", "__setitem__"};
constexpr std::array<std::string_view, 6> kDictMutators = {"clear", "pop", "popitem", "setdefault", "update",
                                                           "__setitem__"};

template <size_t N>
bool contains_name(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

Value string_list(const std::vector<std::string>& parts) {
  ValueList out;
  out.reserve(parts.size());
  for (const std::string& part : parts) out.emplace_back(part);
  return Value::list(std::move(out));
}

std::optional<std::string_view> optional_string(const BoundArgs& args, size_t i, std::string_view what) {
  if (!args.has(i) || args.get(i)->is_none()) return std::nullopt;
  return require_string(*args.get(i), what);
}

// startswith/endswith take a string or a tuple of strings.
bool matches_affix(const std::string& text, const Value& affix, bool at_start) {
  if (affix.is_tuple()) {
    for (const Value& one : affix.as_list()) {
      if (matches_affix(text, one, at_start)) return true;
    }
    return false;
  }
  const std::string& s = require_string(affix, at_start ? "startswith first arg" : "endswith first arg");
  return at_start ? text.starts_with(s) : text.ends_with(s);
}

template <typename Predicate>
bool all_code_points(const std::string& text, Predicate predicate) {
  const std::vector<char32_t> cps = decode_utf8(text);
  if (cps.empty()) return false;
  for (char32_t cp : cps) {
    if (!predicate(cp)) return false;
  }
  return true;
}

Value call_string_method(const std::string& s, std::string_view name, const CallArgs& call) {
  if (name == "startswith" || name == "endswith") {
    BoundArgs args(name, call, {"prefix"});
    if (!args.has(0)) throw RenderError(std::string(name) + "() takes at least 1 argument (0 given)", 0);
    return Value(matches_affix(s, *args.get(0), name == "startswith"));
  }
  if (name == "split" || name == "rsplit") {
    BoundArgs args(name, call, {"sep", "maxsplit"});
    const auto sep = optional_string(args, 0, "sep");
    if (sep && sep->empty()) throw RenderError("empty separator", 0);
    const int64_t maxsplit = require_int(args.get_or(1, Value(-1)), "maxsplit");
    return string_list(name == "split" ? text_split(s, sep, maxsplit) : text_rsplit(s, sep, maxsplit));
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    BoundArgs args(name, call, {"chars"});
    const StripSide side = name == "strip" ? StripSide::kBoth : name == "lstrip" ? StripSide::kLeft : StripSide::kRight;
    return Value(text_strip(s, optional_string(args, 0, "chars"), side));
  }
  if (name == "replace") {
    BoundArgs args(name, call, {"old", "new", "count"});
    if (!args.has(1)) throw RenderError("replace() takes at least 2 arguments", 0);
    return Value(text_replace(s, require_string(*args.get(0), "replace() argument 1"),
                              require_string(*args.get(1), "replace() argument 2"),
                              require_int(args.get_or(2, Value(-1)), "count")));
  }
  if (name == "format") return Value(str_format(s, call));
  if (name == "join") {
    BoundArgs args(name, call, {"iterable"});
    std::string out;
    bool first = true;
    for (const Value& item : iterate(args.get_or(0, Value::list({})))) {
      if (!first) out += s;
      first = false;
      out += require_string(item, "sequence item");
    }
    return Value(std::move(out));
  }
  if (name == "splitlines") return string_list(text_splitlines(s));
  BoundArgs args(name, call, {"sub"});
  if (name == "find" || name == "rfind" || name == "count" || name == "index" || name == "rindex") {
    if (!args.has(0)) throw RenderError(std::string(name) + "() takes at least 1 argument (0 given)", 0);
    const std::string& sub = require_string(*args.get(0), "must be str");
    if (name == "count") return Value(text_count(s, sub));
    const int64_t at = text_find(s, sub, name[0] == 'r');
    if (at < 0 && (name == "index" || name == "rindex")) throw RenderError("substring not found", 0);
    return Value(at);
  }
  if (args.has(0)) throw RenderError(std::string(name) + "() takes no arguments", 0);
  if (name == "lower") return Value(text_lower(s));
  if (name == "upper") return Value(text_upper(s));
  if (name == "title") return Value(text_title(s));
  if (name == "capitalize") return Value(text_capitalize(s));
  if (name == "isdigit") return Value(all_code_points(s, is_python_digit));
  if (name == "isalpha") return Value(all_code_points(s, is_python_alpha));
  if (name == "isalnum") return Value(all_code_points(s, [](char32_t c) { return is_python_alpha(c) || is_python_digit(c); }));
  if (name == "isspace") return Value(all_code_points(s, is_python_space));
  if (name == "islower") return Value(text_lower(s) == s && text_upper(s) != s);
  if (name == "isupper") return Value(text_upper(s) == s && text_lower(s) != s);
  throw RenderError("'str' object has no attribute '" + std::string(name) + "'", 0);
}

bool is_string_method(std::string_view name) {
  static constexpr std::array<std::string_view, 26> kNames = {
      "startswith", "endswith", "split", "rsplit", "strip", "lstrip", "rstrip", "replace", "format", "join",
      "splitlines", "find", "rfind", "count", "index", "rindex", "lower", "upper", "title", "capitalize",
      "isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper"};
  return contains_name(kNames, name);
}

Value call_dict_method(const Value& dict, std::string_view name, const CallArgs& call) {
  if (name == "get") {
    BoundArgs args(name, call, {"key", "default"});
    if (!args.has(0)) throw RenderError("get expected at least 1 argument, got 0", 0);
    const Value* found = dict.find_key(*args.get(0));
    return found ? *found : args.get_or(1, Value::none());
  }
  BoundArgs args(name, call, {});
  ValueList out;
  for (size_t i = 0; i < dict.as_dict().size(); ++i) {
    const Value& value = dict.as_dict()[i].second;
    if (name == "items") out.push_back(Value::tuple({dict.dict_key(i), value}));
    else if (name == "keys") out.push_back(dict.dict_key(i));
    else out.push_back(value);
  }
  return Value::list(std::move(out));
}

Value call_list_method(const Value& list, std::string_view name, const CallArgs& call) {
  BoundArgs args(name, call, {"value"});
  if (!args.has(0)) throw RenderError(std::string(name) + "() takes exactly one argument (0 given)", 0);
  const ValueList& items = list.as_list();
  int64_t count = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!equal(items[i], *args.get(0))) continue;
    if (name == "index") return Value(static_cast<int64_t>(i));
    ++count;
  }
  if (name == "index") throw RenderError(python_repr(*args.get(0)) + " is not in list", 0);
  return Value(count);
}

[[noreturn]] void unsafe(std::string_view name, std::string_view type) {
  throw RenderError("access to attribute '" + std::string(name) + "' of '" + std::string(type) +
                        "' object is unsafe.", 0);
}

}  // namespace

std::optional<Value> bound_method(const Value& object, std::string_view name) {
  const std::string method(name);
  if (object.is_string() && is_string_method(name)) {
    return Value::function(method, [object, method](const CallArgs& args) {
      return call_string_method(object.as_string(), method, args);
    });
  }
  if (object.is_dict()) {
    if (contains_name(kDictMutators, name)) unsafe(name, "dict");
    if (name == "get" || name == "items" || name == "keys" || name == "values") {
      return Value::function(method, [object, method](const CallArgs& args) { return call_dict_method(object, method, args); });
    }
  }
  if (object.is_sequence()) {
    if (object.is_list() && contains_name(kListMutators, name)) unsafe(name, "list");
    if (name == "index" || name == "count") {
      return Value::function(method, [object, method](const CallArgs& args) { return call_list_method(object, method, args); });
    }
  }
  return std::nullopt;
}

}  // namespace strata::jinja
