#include "model/chat/jinja/jinja_filters.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "model/chat/jinja/jinja_args.h"
#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_json.h"
#include "model/chat/jinja/jinja_methods.h"
#include "model/chat/jinja/jinja_operators.h"
#include "model/chat/jinja/jinja_percent_format.h"
#include "model/chat/jinja/jinja_python_format.h"
#include "model/chat/jinja/jinja_sequence_filters.h"
#include "model/chat/jinja/jinja_text.h"
#include "model/chat/jinja/jinja_utf8.h"

namespace strata::jinja {
namespace {

// transformers: json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
// sort_keys=sort_keys).
Value filter_tojson(const Value& subject, const CallArgs& args) {
  BoundArgs bound("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonOptions options;
  options.ensure_ascii = truthy(bound.get_or(0, Value(false)));
  if (bound.has(1) && !bound.get(1)->is_none()) {
    const Value& indent = *bound.get(1);
    options.indent = indent.is_string() ? indent.as_string() : std::string(static_cast<size_t>(std::max<int64_t>(0, require_int(indent, "indent"))), ' ');
  }
  if (bound.has(2) && !bound.get(2)->is_none()) {
    const Value& separators = *bound.get(2);
    if (!separators.is_sequence() || separators.as_list().size() != 2) throw RenderError("separators must be a pair of strings", 0);
    options.item_separator = require_string(separators.as_list()[0], "item separator");
    options.key_separator = require_string(separators.as_list()[1], "key separator");
  }
  options.sort_keys = truthy(bound.get_or(3, Value(false)));
  return Value(to_json(subject, options));
}

Value filter_trim(const Value& subject, const CallArgs& args) {
  BoundArgs bound("trim", args, {"chars"});
  std::optional<std::string_view> chars;
  if (bound.has(0) && !bound.get(0)->is_none()) chars = require_string(*bound.get(0), "chars");
  return Value(text_strip(python_str(subject), chars, StripSide::kBoth));
}

Value filter_default(const Value& subject, const CallArgs& args) {
  BoundArgs bound("default", args, {"default_value", "boolean"});
  const bool use_default = truthy(bound.get_or(1, Value(false))) ? !truthy(subject) : subject.is_undefined();
  return use_default ? bound.get_or(0, Value("")) : subject;
}

Value filter_replace(const Value& subject, const CallArgs& args) {
  BoundArgs bound("replace", args, {"old", "new", "count"});
  if (!bound.has(1)) throw RenderError("replace() missing required arguments 'old' and 'new'", 0);
  const Value count = bound.get_or(2, Value::none());
  return Value(text_replace(python_str(subject), python_str(*bound.get(0)), python_str(*bound.get(1)),
                            count.is_none() ? -1 : require_int(count, "count")));
}

template <std::string (*transform)(std::string_view)>
Value filter_text(const Value& subject, const CallArgs& args) {
  BoundArgs bound("filter", args, {});
  return Value(transform(python_str(subject)));
}

// Jinja2's title filter: words begin after runs of whitespace, '-', '(', '{', '[' or '<'.
std::string jinja_title(std::string_view text) {
  std::string out;
  bool word_start = true;
  for (char32_t cp : decode_utf8(text)) {
    const bool separator = is_python_space(cp) || cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<';
    std::string one;
    append_utf8(one, cp);
    out += separator ? one : word_start ? text_upper(one) : text_lower(one);
    word_start = separator;
  }
  return out;
}

std::string escape_html(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

Value filter_int(const Value& subject, const CallArgs& args) {
  BoundArgs bound("int", args, {"default", "base"});
  const Value fallback = bound.get_or(0, Value(int64_t{0}));
  if (subject.is_integral()) return Value(subject.as_int());
  if (subject.is_float()) return std::isfinite(subject.as_double()) ? Value(static_cast<int64_t>(subject.as_double())) : fallback;
  if (!subject.is_string()) return fallback;
  const std::string text = text_strip(subject.as_string(), std::nullopt, StripSide::kBoth);
  const int base = static_cast<int>(require_int(bound.get_or(1, Value(int64_t{10})), "base"));
  char* end = nullptr;
  const long long n = std::strtoll(text.c_str(), &end, base);
  if (!text.empty() && end == text.c_str() + text.size()) return Value(static_cast<int64_t>(n));
  const double d = std::strtod(text.c_str(), &end);
  if (!text.empty() && end == text.c_str() + text.size() && std::isfinite(d)) return Value(static_cast<int64_t>(d));
  return fallback;
}

Value filter_float(const Value& subject, const CallArgs& args) {
  BoundArgs bound("float", args, {"default"});
  if (subject.is_number()) return Value(subject.as_double());
  if (subject.is_string()) {
    const std::string text = text_strip(subject.as_string(), std::nullopt, StripSide::kBoth);
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size()) return Value(d);
  }
  return bound.get_or(0, Value(0.0));
}

Value filter_abs(const Value& subject, const CallArgs& args) {
  BoundArgs bound("abs", args, {});
  if (subject.is_integral()) return Value(std::abs(subject.as_int()));
  if (subject.is_float()) return Value(std::fabs(subject.as_double()));
  if (subject.is_undefined()) raise_undefined(subject);
  throw RenderError("bad operand type for abs(): '" + std::string(type_name(subject)) + "'", 0);
}

Value filter_round(const Value& subject, const CallArgs& args) {
  BoundArgs bound("round", args, {"precision", "method"});
  const int64_t precision = require_int(bound.get_or(0, Value(int64_t{0})), "precision");
  const std::string method = python_str(bound.get_or(1, Value("common")));
  if (method != "common" && method != "floor" && method != "ceil") {
    throw RenderError("method must be 'common', 'ceil' or 'floor'", 0);
  }
  if (!subject.is_number()) throw RenderError("type " + std::string(type_name(subject)) + " doesn't define __round__ method", 0);
  if (method == "common") {
    if (subject.is_integral() && precision >= 0) return Value(subject.as_int());  // round(int, n) is the int
    // Python rounds the exact binary value to `precision` decimals, ties to even, as printf does.
    char buffer[512];
    std::snprintf(buffer, sizeof buffer, "%.*f", static_cast<int>(std::clamp<int64_t>(precision, 0, 300)), subject.as_double());
    return Value(std::strtod(buffer, nullptr));
  }
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double scaled = subject.as_double() * scale;
  return Value((method == "floor" ? std::floor(scaled) : std::ceil(scaled)) / scale);
}

Value filter_wordcount(const Value& subject, const CallArgs& args) {
  BoundArgs bound("wordcount", args, {});
  int64_t words = 0;
  bool in_word = false;
  for (char32_t cp : decode_utf8(python_str(subject))) {
    const bool word_char = is_python_alpha(cp) || is_python_digit(cp) || cp == '_';
    words += word_char && !in_word;
    in_word = word_char;
  }
  return Value(words);
}

Value filter_indent(const Value& subject, const CallArgs& args) {
  BoundArgs bound("indent", args, {"width", "first", "blank"});
  const Value width = bound.get_or(0, Value(int64_t{4}));
  const std::string indent = width.is_string() ? width.as_string() : std::string(static_cast<size_t>(std::max<int64_t>(0, require_int(width, "width"))), ' ');
  const bool first = truthy(bound.get_or(1, Value(false)));
  const bool blank = truthy(bound.get_or(2, Value(false)));
  const std::vector<std::string> lines = text_splitlines(python_str(subject) + "\n");
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += '\n';
    if (i > 0 && (blank || !lines[i].empty())) out += indent;
    out += lines[i];
  }
  return Value(first ? indent + out : out);
}

Value filter_center(const Value& subject, const CallArgs& args) {
  BoundArgs bound("center", args, {"width"});
  const std::string text = python_str(subject);
  const int64_t width = require_int(bound.get_or(0, Value(int64_t{80})), "width");
  const int64_t n = static_cast<int64_t>(count_code_points(text));
  if (width <= n) return Value(text);
  const int64_t padding = width - n;
  const int64_t left = padding / 2 + (padding & width & 1);
  return Value(std::string(static_cast<size_t>(left), ' ') + text + std::string(static_cast<size_t>(padding - left), ' '));
}

Value filter_truncate(const Value& subject, const CallArgs& args) {
  BoundArgs bound("truncate", args, {"length", "killwords", "end", "leeway"});
  const std::string text = python_str(subject);
  const int64_t max_length = require_int(bound.get_or(0, Value(int64_t{255})), "length");
  const bool killwords = truthy(bound.get_or(1, Value(false)));
  const std::string end = python_str(bound.get_or(2, Value("...")));
  const int64_t leeway = require_int(bound.get_or(3, Value(int64_t{5})), "leeway");
  const int64_t n_end = static_cast<int64_t>(count_code_points(end));
  if (max_length < n_end) throw RenderError("expected length >= " + std::to_string(n_end) + ", got " + std::to_string(max_length), 0);
  if (static_cast<int64_t>(count_code_points(text)) <= max_length + leeway) return Value(text);
  const std::string head = python_str(get_slice(Value(text), Value::none(), Value(max_length - n_end), Value::none()));
  if (killwords) return Value(head + end);
  return Value(text_rsplit(head, std::string_view(" "), 1).front() + end);
}

Value filter_format(const Value& subject, const CallArgs& args) {
  if (!args.keyword.empty()) throw RenderError("format filter with keyword arguments is not supported", 0);
  return Value(percent_format(python_str(subject), Value::tuple(args.positional)));
}

Value filter_attr(const Value& subject, const CallArgs& args) {
  BoundArgs bound("attr", args, {"name"});
  if (!bound.has(0)) throw RenderError("attr() missing required argument 'name'", 0);
  const std::string& name = require_string(*bound.get(0), "name");
  if (subject.is_undefined()) raise_undefined(subject);
  if (std::optional<Value> method = bound_method(subject, name)) return *std::move(method);
  if (subject.is_object()) {
    if (std::optional<Value> attribute = subject.as_object().attribute(name)) return *std::move(attribute);
  }
  return Value::undefined("'" + object_type_name(subject) + "' has no attribute '" + name + "'");
}

Value filter_string(const Value& subject, const CallArgs& args) {
  BoundArgs bound("string", args, {});
  return subject.is_string() ? subject : Value(python_str(subject));
}

constexpr std::array<std::pair<std::string_view, FilterFunction>, 44> kFilters = {{
    {"tojson", filter_tojson}, {"trim", filter_trim}, {"default", filter_default}, {"d", filter_default},
    {"replace", filter_replace}, {"lower", filter_text<text_lower>}, {"upper", filter_text<text_upper>},
    {"title", filter_text<jinja_title>}, {"capitalize", filter_text<text_capitalize>},
    {"e", filter_text<escape_html>}, {"escape", filter_text<escape_html>},
    {"forceescape", filter_text<escape_html>}, {"safe", filter_string}, {"string", filter_string},
    {"sum", filter_sum}, {"int", filter_int}, {"float", filter_float}, {"abs", filter_abs},
    {"round", filter_round}, {"wordcount", filter_wordcount}, {"indent", filter_indent},
    {"center", filter_center}, {"truncate", filter_truncate}, {"format", filter_format},
    {"attr", filter_attr}, {"length", filter_length}, {"count", filter_length}, {"first", filter_first},
    {"last", filter_last}, {"join", filter_join}, {"map", filter_map}, {"select", filter_select},
    {"reject", filter_reject}, {"selectattr", filter_selectattr}, {"rejectattr", filter_rejectattr},
    {"sort", filter_sort}, {"unique", filter_unique}, {"reverse", filter_reverse}, {"list", filter_list},
    {"items", filter_items}, {"dictsort", filter_dictsort}, {"batch", filter_batch}, {"min", filter_min},
    {"max", filter_max},
}};

}  // namespace

FilterFunction find_filter(std::string_view name) {
  for (const auto& [filter_name, function] : kFilters) {
    if (filter_name == name) return function;
  }
  return nullptr;
}

}  // namespace strata::jinja
