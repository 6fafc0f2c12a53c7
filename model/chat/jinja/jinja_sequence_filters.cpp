#include "model/chat/jinja/jinja_sequence_filters.h"

#include <algorithm>
#include <charconv>

#include "model/chat/jinja/jinja_args.h"
#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_filters.h"
#include "model/chat/jinja/jinja_operators.h"
#include "model/chat/jinja/jinja_python_format.h"
#include "model/chat/jinja/jinja_tests.h"
#include "model/chat/jinja/jinja_text.h"

namespace strata::jinja {
namespace {

// Jinja2's make_attrgetter: "a.b.0" looks up item-first at each dot; integer parts index.
Value get_path(const Value& item, const Value& attribute) {
  if (attribute.is_integral()) return get_item(item, attribute);
  const std::string& path = require_string(attribute, "attribute");
  Value value = item;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string_view part = std::string_view(path).substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    int64_t index = 0;
    const auto parsed = std::from_chars(part.data(), part.data() + part.size(), index);
    const bool is_index = !part.empty() && parsed.ec == std::errc() && parsed.ptr == part.data() + part.size();
    if (value.is_undefined()) return value;
    value = is_index ? get_item(value, Value(index)) : get_item(value, Value(part));
    if (dot == std::string::npos) return value;
    start = dot + 1;
  }
}

// Jinja2 compares strings case-insensitively unless case_sensitive is set.
Value sort_key(const Value& item, bool case_sensitive) {
  return !case_sensitive && item.is_string() ? Value(text_lower(item.as_string())) : item;
}

bool less(const Value& a, const Value& b) { return compare(CompareOp::kLess, a, b); }

Value list_or_undefined(ValueList items) { return Value::list(std::move(items)); }

// select / reject / selectattr / rejectattr: `args` after the attribute (if any) are the
// test's name and arguments; no test: truthiness.
Value select_items(const Value& subject, const CallArgs& args, bool by_attribute, bool keep_matching) {
  CallArgs test_args;
  size_t first = 0;
  Value attribute;
  if (by_attribute) {
    if (args.positional.empty()) throw RenderError("selectattr() missing the attribute name", 0);
    attribute = args.positional[0];
    first = 1;
  }
  TestFunction test = nullptr;
  if (args.positional.size() > first) {
    const std::string& name = require_string(args.positional[first], "test name");
    test = find_test(name);
    if (test == nullptr) throw RenderError("No test named '" + name + "'.", 0);
    test_args.positional.assign(args.positional.begin() + static_cast<ptrdiff_t>(first) + 1, args.positional.end());
    test_args.keyword = args.keyword;
  }
  ValueList out;
  for (const Value& item : iterate(subject)) {
    const Value probe = by_attribute ? get_path(item, attribute) : item;
    const bool matches = test ? test(probe, test_args) : truthy(probe);
    if (matches == keep_matching) out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value aggregate(const Value& subject, const CallArgs& args, bool want_max) {
  BoundArgs bound(want_max ? "max" : "min", args, {"case_sensitive", "attribute"});
  const bool case_sensitive = truthy(bound.get_or(0, Value(false)));
  const ValueList items = iterate(subject);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  auto key = [&](size_t i) {
    return sort_key(bound.has(1) ? get_path(items[i], *bound.get(1)) : items[i], case_sensitive);
  };
  for (size_t i = 1; i < items.size(); ++i) {
    if (want_max ? less(key(best), key(i)) : less(key(i), key(best))) best = i;
  }
  return items[best];
}

}  // namespace

Value filter_length(const Value& subject, const CallArgs& args) {
  BoundArgs bound("length", args, {});
  return Value(length(subject));
}

Value filter_first(const Value& subject, const CallArgs& args) {
  BoundArgs bound("first", args, {});
  const ValueList items = iterate(subject);
  return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value filter_last(const Value& subject, const CallArgs& args) {
  BoundArgs bound("last", args, {});
  const ValueList items = iterate(subject);
  return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value filter_join(const Value& subject, const CallArgs& args) {
  BoundArgs bound("join", args, {"d", "attribute"});
  const std::string separator = python_str(bound.get_or(0, Value("")));
  std::string out;
  bool first = true;
  for (const Value& item : iterate(subject)) {
    if (!first) out += separator;
    first = false;
    append_python_str(out, bound.has(1) ? get_path(item, *bound.get(1)) : item);
  }
  return Value(std::move(out));
}

Value filter_map(const Value& subject, const CallArgs& args) {
  ValueList out;
  if (args.positional.empty()) {
    BoundArgs bound("map", args, {"attribute", "default"});
    if (!bound.has(0)) throw RenderError("map() needs a filter name or attribute=", 0);
    for (const Value& item : iterate(subject)) {
      Value value = get_path(item, *bound.get(0));
      if (value.is_undefined() && bound.has(1)) value = *bound.get(1);
      out.push_back(std::move(value));
    }
    return Value::list(std::move(out));
  }
  const std::string& name = require_string(args.positional[0], "filter name");
  const FilterFunction filter = find_filter(name);
  if (filter == nullptr) throw RenderError("No filter named '" + name + "'.", 0);
  CallArgs filter_args;
  filter_args.positional.assign(args.positional.begin() + 1, args.positional.end());
  filter_args.keyword = args.keyword;
  for (const Value& item : iterate(subject)) out.push_back(filter(item, filter_args));
  return Value::list(std::move(out));
}

Value filter_select(const Value& s, const CallArgs& a) { return select_items(s, a, false, true); }
Value filter_reject(const Value& s, const CallArgs& a) { return select_items(s, a, false, false); }
Value filter_selectattr(const Value& s, const CallArgs& a) { return select_items(s, a, true, true); }
Value filter_rejectattr(const Value& s, const CallArgs& a) { return select_items(s, a, true, false); }

Value filter_sort(const Value& subject, const CallArgs& args) {
  BoundArgs bound("sort", args, {"reverse", "case_sensitive", "attribute"});
  const bool reverse = truthy(bound.get_or(0, Value(false)));
  const bool case_sensitive = truthy(bound.get_or(1, Value(false)));
  ValueList items = iterate(subject);
  std::vector<std::pair<Value, size_t>> keys;
  for (size_t i = 0; i < items.size(); ++i) {
    keys.emplace_back(sort_key(bound.has(2) ? get_path(items[i], *bound.get(2)) : items[i], case_sensitive), i);
  }
  std::stable_sort(keys.begin(), keys.end(), [&](const auto& a, const auto& b) {
    return reverse ? less(b.first, a.first) : less(a.first, b.first);
  });
  ValueList out;
  for (const auto& key : keys) out.push_back(items[key.second]);
  return list_or_undefined(std::move(out));
}

Value filter_unique(const Value& subject, const CallArgs& args) {
  BoundArgs bound("unique", args, {"case_sensitive", "attribute"});
  const bool case_sensitive = truthy(bound.get_or(0, Value(false)));
  ValueList out;
  ValueList seen;
  for (const Value& item : iterate(subject)) {
    Value key = sort_key(bound.has(1) ? get_path(item, *bound.get(1)) : item, case_sensitive);
    if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equal(s, key); })) continue;
    seen.push_back(std::move(key));
    out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value filter_reverse(const Value& subject, const CallArgs& args) {
  BoundArgs bound("reverse", args, {});
  if (subject.is_string()) return get_slice(subject, Value::none(), Value::none(), Value(-1));
  ValueList items = iterate(subject);
  std::reverse(items.begin(), items.end());
  return Value::list(std::move(items));
}

Value filter_list(const Value& subject, const CallArgs& args) {
  BoundArgs bound("list", args, {});
  return Value::list(iterate(subject));
}

Value filter_items(const Value& subject, const CallArgs& args) {
  BoundArgs bound("items", args, {});
  if (subject.is_undefined()) return Value::list({});
  if (!subject.is_dict()) throw RenderError("Can only get item pairs from a mapping.", 0);
  ValueList out;
  for (size_t i = 0; i < subject.as_dict().size(); ++i) {
    out.push_back(Value::tuple({subject.dict_key(i), subject.as_dict()[i].second}));
  }
  return Value::list(std::move(out));
}

Value filter_dictsort(const Value& subject, const CallArgs& args) {
  BoundArgs bound("dictsort", args, {"case_sensitive", "by", "reverse"});
  const bool case_sensitive = truthy(bound.get_or(0, Value(false)));
  const std::string by = python_str(bound.get_or(1, Value("key")));
  if (by != "key" && by != "value") throw RenderError("You can only sort by either \"key\" or \"value\"", 0);
  const Value pairs = filter_items(subject, {});
  CallArgs sort_args;
  sort_args.keyword = {{"reverse", bound.get_or(2, Value(false))}, {"case_sensitive", Value(case_sensitive)},
                       {"attribute", Value(by == "key" ? int64_t{0} : int64_t{1})}};
  return filter_sort(pairs, sort_args);
}

Value filter_batch(const Value& subject, const CallArgs& args) {
  BoundArgs bound("batch", args, {"linecount", "fill_with"});
  if (!bound.has(0)) throw RenderError("batch() missing required argument 'linecount'", 0);
  const int64_t count = require_int(*bound.get(0), "linecount");
  if (count <= 0) throw RenderError("batch() linecount must be positive", 0);
  ValueList out, row;
  for (const Value& item : iterate(subject)) {
    row.push_back(item);
    if (static_cast<int64_t>(row.size()) == count) out.push_back(Value::list(std::exchange(row, {})));
  }
  if (!row.empty()) {
    if (bound.has(1)) while (static_cast<int64_t>(row.size()) < count) row.push_back(*bound.get(1));
    out.push_back(Value::list(std::move(row)));
  }
  return Value::list(std::move(out));
}

Value filter_min(const Value& subject, const CallArgs& args) { return aggregate(subject, args, false); }
Value filter_max(const Value& subject, const CallArgs& args) { return aggregate(subject, args, true); }

Value filter_sum(const Value& subject, const CallArgs& args) {
  BoundArgs bound("sum", args, {"attribute", "start"});
  Value total = bound.get_or(1, Value(int64_t{0}));
  for (const Value& item : iterate(subject)) {
    total = binary_operation(BinaryOp::kAdd, total, bound.has(0) ? get_path(item, *bound.get(0)) : item);
  }
  return total;
}

}  // namespace strata::jinja
