#include "service/openai/json_schema_grammar.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "common/str_cat.h"
#include "grammar/grammar_builder.h"
#include "grammar/json_grammar.h"
#include "grammar/json_string_regex.h"

namespace strata::openai {
namespace {

namespace g = strata::grammar;

const std::set<std::string, std::less<>> kAnnotations = {
    "title", "description", "default", "examples", "$schema", "$id", "$comment", "deprecated",
    "readOnly", "writeOnly", "$defs", "definitions"};

const std::set<std::string, std::less<>> kKeywords = {
    "type", "properties", "required", "additionalProperties", "items", "prefixItems", "minItems",
    "maxItems", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "minLength", "maxLength",
    "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};

// The formats, as patterns in the subset json_string_regex compiles.
const std::map<std::string, std::string, std::less<>> kFormats = {
    {"date", "^\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)"
             "|02-(?:0[1-9]|1\\d|2[0-8]))$"},
    {"time", "^(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{1,6})?(?:Z|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)$"},
    {"date-time", "^\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)"
                  "|02-(?:0[1-9]|1\\d|2[0-8]))T(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{1,6})?"
                  "(?:Z|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)$"},
    {"uuid", "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"},
    {"email", "^[A-Za-z0-9_%+-]+(?:\\.[A-Za-z0-9_%+-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\\.)+"
              "[A-Za-z]{2,24}$"},
};

// RFC 6901: '~' and '/' in a key.
std::string pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

[[noreturn]] void fail(const std::string& pointer, const std::string& message) {
  throw JsonSchemaError(pointer, message);
}

// A JSON literal as compact text. Strings with invalid UTF-8 cannot be written.
std::string literal_text(const Json& value, const std::string& pointer) {
  try {
    return value.dump();
  } catch (const Json::exception& error) {
    fail(pointer, str_cat("cannot be written as JSON: ", error.what()));
  }
}

class SchemaCompiler {
 public:
  SchemaCompiler(const Json& root, const JsonSchemaGrammarOptions& options)
      : root_(root), options_(options), json_(builder_) {}

  g::Grammar compile_root() {
    g::RuleId root = builder_.add("root", compile(root_, ""));
    try {
      return builder_.build(root);
    } catch (const std::invalid_argument& error) {
      fail("", str_cat("no finite JSON value satisfies the schema (", error.what(), ")"));
    }
  }

 private:
  g::GrammarExpr compile(const Json& schema, const std::string& at) {
    if (schema.is_boolean()) {
      if (schema.get<bool>()) return json_.value();
      fail(at, "the schema false allows no value");
    }
    if (!schema.is_object()) fail(at, "a schema must be an object or a boolean");
    check_keywords(schema, at);
    if (schema.contains("$ref")) return reference(schema, at);
    if (schema.contains("allOf")) return compile(merge_all_of(schema, at), at);
    if (schema.contains("const")) return g::literal(literal_text(schema["const"], at + "/const"));
    if (schema.contains("enum")) return enumeration(schema, at);
    if (schema.contains("anyOf") || schema.contains("oneOf")) return any_of(schema, at);
    return typed(schema, at);
  }

  void check_keywords(const Json& schema, const std::string& at) const {
    for (const auto& [key, value] : schema.items()) {
      if (!kKeywords.contains(key) && !kAnnotations.contains(key)) {
        fail(at + "/" + pointer_token(key), str_cat("unsupported JSON Schema keyword '", key, "'"));
      }
    }
  }

  // Keywords other than annotations, for checks of what may stand beside what.
  static std::vector<std::string> constraint_keys(const Json& schema) {
    std::vector<std::string> out;
    for (const auto& [key, value] : schema.items()) {
      if (!kAnnotations.contains(key)) out.push_back(key);
    }
    return out;
  }

  void only_keyword(const Json& schema, const std::string& keyword, const std::string& at) const {
    for (const std::string& key : constraint_keys(schema)) {
      if (key != keyword && !(keyword == "enum" && key == "type") && !(keyword == "const" && key == "type")) {
        fail(at + "/" + pointer_token(key), str_cat("'", key, "' beside '", keyword, "' is not supported"));
      }
    }
  }

  g::GrammarExpr reference(const Json& schema, const std::string& at) {
    only_keyword(schema, "$ref", at);
    const Json& ref = schema["$ref"];
    if (!ref.is_string() || !ref.get<std::string>().starts_with("#")) {
      fail(at + "/$ref", "only references within the schema (\"#...\") are supported");
    }
    std::string target = ref.get<std::string>().substr(1);
    auto found = refs_.find(target);
    if (found != refs_.end()) return g::rule_ref(found->second);
    const Json* resolved = nullptr;
    try {
      resolved = &root_.at(Json::json_pointer(target));
    } catch (const Json::exception&) {
      fail(at + "/$ref", str_cat("the reference \"", ref.get<std::string>(), "\" leads nowhere"));
    }
    g::RuleId rule = builder_.declare("ref");
    refs_.emplace(target, rule);
    builder_.define(rule, compile(*resolved, target));
    return g::rule_ref(rule);
  }

  const Json& resolve(const Json& schema, const std::string& at) const {
    if (!schema.is_object() || !schema.contains("$ref")) return schema;
    const Json& ref = schema["$ref"];
    try {
      if (ref.is_string() && ref.get<std::string>().starts_with("#")) {
        return root_.at(Json::json_pointer(ref.get<std::string>().substr(1)));
      }
    } catch (const Json::exception&) {
    }
    fail(at + "/$ref", "allOf: the reference leads nowhere (only \"#...\" references are supported)");
  }

  // allOf of object schemas (or of schemas with disjoint keywords) as one schema:
  // properties joined, required lists joined; any other keyword must agree.
  Json merge_all_of(const Json& schema, const std::string& at) const {
    const Json& parts = schema["allOf"];
    if (!parts.is_array() || parts.empty()) fail(at + "/allOf", "allOf must be a non-empty array");
    Json merged = schema;
    merged.erase("allOf");
    int closed_parts = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      std::string part_at = str_cat(at, "/allOf/", i);
      const Json& part = resolve(parts[i], part_at);
      if (!part.is_object()) fail(part_at, "allOf parts must be object schemas");
      closed_parts += part.contains("additionalProperties") && part["additionalProperties"] != Json(true) ? 1 : 0;
      for (const auto& [key, value] : part.items()) {
        if (kAnnotations.contains(key)) continue;
        if (key == "properties" && merged.contains(key) && value.is_object()) {
          for (const auto& [name, property] : value.items()) {
            if (merged[key].contains(name) && merged[key][name] != property) {
              fail(part_at + "/properties/" + pointer_token(name), "allOf: the property is defined twice, differently");
            }
            merged[key][name] = property;
          }
        } else if (key == "required" && merged.contains(key) && value.is_array()) {
          for (const Json& name : value) {
            if (std::find(merged[key].begin(), merged[key].end(), name) == merged[key].end()) merged[key].push_back(name);
          }
        } else if (merged.contains(key) && merged[key] != value) {
          fail(part_at + "/" + pointer_token(key), str_cat("allOf: '", key, "' differs between the parts"));
        } else {
          merged[key] = value;
        }
      }
    }
    // A part that limits additional properties rejects the other parts' properties: the
    // merge would allow what allOf does not. A single part stands alone.
    if (schema.contains("additionalProperties") && schema["additionalProperties"] != Json(true)) ++closed_parts;
    bool alone = parts.size() == 1 && !schema.contains("properties");
    if (closed_parts > 0 && !alone) {
      fail(at + "/allOf", "additionalProperties in or beside allOf is not supported (JSON Schema would reject "
                          "the properties of the other parts); leave it out");
    }
    return merged;
  }

  g::GrammarExpr enumeration(const Json& schema, const std::string& at) {
    only_keyword(schema, "enum", at);
    const Json& values = schema["enum"];
    if (!values.is_array() || values.empty()) fail(at + "/enum", "enum must be a non-empty array");
    std::vector<g::GrammarExpr> options;
    for (size_t i = 0; i < values.size(); ++i) {
      options.push_back(g::literal(literal_text(values[i], str_cat(at, "/enum/", i))));
    }
    return g::choice(std::move(options));
  }

  g::GrammarExpr any_of(const Json& schema, const std::string& at) {
    std::string keyword = schema.contains("anyOf") ? "anyOf" : "oneOf";
    only_keyword(schema, keyword, at);
    const Json& options = schema[keyword];
    if (!options.is_array() || options.empty()) fail(at + "/" + keyword, keyword + " must be a non-empty array");
    std::vector<g::GrammarExpr> out;
    for (size_t i = 0; i < options.size(); ++i) out.push_back(compile(options[i], str_cat(at, "/", keyword, "/", i)));
    return g::choice(std::move(out));
  }

  static std::string inferred_type(const Json& schema) {
    for (const char* key : {"properties", "additionalProperties", "required"}) {
      if (schema.contains(key)) return "object";
    }
    for (const char* key : {"items", "prefixItems", "minItems", "maxItems"}) {
      if (schema.contains(key)) return "array";
    }
    for (const char* key : {"pattern", "format", "minLength", "maxLength"}) {
      if (schema.contains(key)) return "string";
    }
    for (const char* key : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
      if (schema.contains(key)) return "number";
    }
    return "";
  }

  g::GrammarExpr typed(const Json& schema, const std::string& at) {
    if (!schema.contains("type")) {
      std::string type = inferred_type(schema);
      return type.empty() ? json_.value() : of_type(type, schema, at);
    }
    const Json& type = schema["type"];
    if (type.is_string()) return of_type(type.get<std::string>(), schema, at);
    if (!type.is_array() || type.empty()) fail(at + "/type", "type must be a string or a non-empty array");
    std::vector<g::GrammarExpr> options;
    for (size_t i = 0; i < type.size(); ++i) {
      if (!type[i].is_string()) fail(str_cat(at, "/type/", i), "type names must be strings");
      options.push_back(of_type(type[i].get<std::string>(), schema, at));
    }
    return g::choice(std::move(options));
  }

  g::GrammarExpr of_type(const std::string& type, const Json& schema, const std::string& at) {
    if (type == "string") return string(schema, at);
    if (type == "integer") return integer(schema, at);
    if (type == "number") return number(schema, at);
    if (type == "boolean") return json_.boolean();
    if (type == "null") return json_.null();
    if (type == "object") return object(schema, at);
    if (type == "array") return array(schema, at);
    fail(at + "/type", str_cat("unknown type '", type, "'"));
  }

  std::optional<uint32_t> count(const Json& schema, const char* key, const std::string& at) const {
    if (!schema.contains(key)) return std::nullopt;
    const Json& value = schema[key];
    if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > 100000) {
      fail(at + "/" + key, str_cat(key, " must be an integer from 0 to 100000"));
    }
    return static_cast<uint32_t>(value.get<int64_t>());
  }

  std::optional<double> bound(const Json& schema, const char* key, const std::string& at) const {
    if (!schema.contains(key) || schema[key].is_boolean()) return std::nullopt;
    if (!schema[key].is_number()) fail(at + "/" + key, str_cat(key, " must be a number"));
    return schema[key].get<double>();
  }

  g::GrammarExpr string(const Json& schema, const std::string& at) {
    std::optional<uint32_t> min_length = count(schema, "minLength", at);
    std::optional<uint32_t> max_length = count(schema, "maxLength", at);
    uint32_t low = min_length.value_or(0), high = max_length.value_or(g::kUnbounded);
    if (low > high) fail(at, "minLength is greater than maxLength");
    std::optional<std::string> pattern;
    std::string pattern_at;
    if (schema.contains("format")) {
      pattern_at = at + "/format";
      if (!schema["format"].is_string()) fail(pattern_at, "format must be a string");
      auto format = kFormats.find(schema["format"].get<std::string>());
      if (format == kFormats.end()) {
        fail(pattern_at, str_cat("unsupported format '", schema["format"].get<std::string>(),
                                 "' (supported: date, time, date-time, uuid, email)"));
      }
      if (schema.contains("pattern")) fail(at + "/pattern", "pattern beside format is not supported");
      pattern = format->second;
    } else if (schema.contains("pattern")) {
      pattern_at = at + "/pattern";
      if (!schema["pattern"].is_string()) fail(pattern_at, "pattern must be a string");
      pattern = schema["pattern"].get<std::string>();
    }
    if (!pattern) return json_.string(low, high);
    g::JsonStringRegex regex;
    try {
      regex = g::compile_json_string_regex(*pattern, json_);
    } catch (const std::invalid_argument& error) {
      fail(pattern_at, error.what());
    }
    if ((min_length || max_length) && (regex.min_chars < low || regex.max_chars > high)) {
      fail(at, "minLength/maxLength beside a pattern or format are supported only when every match of the "
               "anchored pattern has an allowed length");
    }
    return g::sequence({g::literal("\""), std::move(regex.contents), g::literal("\"")});
  }

  // Draft 6+ (exclusiveMinimum: a number) or draft 4 (exclusiveMinimum: true beside minimum).
  g::NumberBounds number_bounds(const Json& schema, const std::string& at) const {
    g::NumberBounds bounds;
    bounds.minimum = bound(schema, "minimum", at);
    bounds.maximum = bound(schema, "maximum", at);
    auto tighten = [&](const char* key, std::optional<double>& side, bool& exclusive, bool is_min) {
      if (!schema.contains(key)) return;
      if (schema[key].is_boolean()) {
        exclusive = schema[key].get<bool>() && side.has_value();
        return;
      }
      double value = *bound(schema, key, at);
      bool tighter = !side || (is_min ? value >= *side : value <= *side);
      if (tighter) {
        side = value;
        exclusive = true;
      }
    };
    tighten("exclusiveMinimum", bounds.minimum, bounds.minimum_exclusive, true);
    tighten("exclusiveMaximum", bounds.maximum, bounds.maximum_exclusive, false);
    for (const std::optional<double>* side : {&bounds.minimum, &bounds.maximum}) {
      if (*side && std::fabs(**side) > static_cast<double>(g::kMaxJsonInteger)) {
        fail(at, str_cat("bounds beyond +-", g::kMaxJsonInteger, " are not supported"));
      }
    }
    return bounds;
  }

  g::GrammarExpr integer(const Json& schema, const std::string& at) {
    g::NumberBounds bounds = number_bounds(schema, at);
    std::optional<int64_t> low, high;
    if (bounds.minimum) {
      double value = bounds.minimum_exclusive ? std::floor(*bounds.minimum) + 1 : std::ceil(*bounds.minimum);
      low = static_cast<int64_t>(value);
    }
    if (bounds.maximum) {
      double value = bounds.maximum_exclusive ? std::ceil(*bounds.maximum) - 1 : std::floor(*bounds.maximum);
      high = static_cast<int64_t>(value);
    }
    if (low && high && *low > *high) fail(at, "no integer lies within the bounds");
    return json_.integer(low, high);
  }

  g::GrammarExpr number(const Json& schema, const std::string& at) {
    g::NumberBounds bounds = number_bounds(schema, at);
    if (bounds.minimum && bounds.maximum) {
      double low = std::ceil(*bounds.minimum), high = std::floor(*bounds.maximum);
      bool exclusive = (bounds.minimum_exclusive && low == *bounds.minimum) ||
                       (bounds.maximum_exclusive && high == *bounds.maximum);
      if (low > high || (low == high && exclusive)) {
        fail(at, "no number with integral bounds inside the given ones lies within them");
      }
    }
    return json_.number(bounds);
  }

  g::GrammarExpr object(const Json& schema, const std::string& at);
  g::GrammarExpr array(const Json& schema, const std::string& at);
  g::GrammarExpr additional_members(const Json& schema, const std::vector<std::string>& names,
                                    bool first, const std::string& at);

  const Json& root_;
  JsonSchemaGrammarOptions options_;
  g::GrammarBuilder builder_;
  g::JsonGrammar json_;
  std::map<std::string, g::RuleId> refs_;  // JSON pointer of a $ref target -> its rule
};

// Members in the schema's order. rest(i, first) is what may follow once properties
// before i are settled, `first` telling whether none was written (so no comma is due).
g::GrammarExpr SchemaCompiler::object(const Json& schema, const std::string& at) {
  const Json empty_properties = Json::object();
  const Json& properties = schema.contains("properties") ? schema["properties"] : empty_properties;
  if (!properties.is_object()) fail(at + "/properties", "properties must be an object");
  std::set<std::string> required;
  if (schema.contains("required")) {
    if (!schema["required"].is_array()) fail(at + "/required", "required must be an array of names");
    for (size_t i = 0; i < schema["required"].size(); ++i) {
      const Json& name = schema["required"][i];
      if (!name.is_string()) fail(str_cat(at, "/required/", i), "required must be an array of names");
      if (!properties.contains(name.get<std::string>())) {
        fail(str_cat(at, "/required/", i), str_cat("required property '", name.get<std::string>(),
                                                   "' is not among the properties"));
      }
      required.insert(name.get<std::string>());
    }
  }
  std::vector<std::string> names;
  std::vector<g::RuleId> members;
  for (const auto& [name, property] : properties.items()) {
    std::string property_at = at + "/properties/" + pointer_token(name);
    std::string key = literal_text(Json(name), property_at);
    g::GrammarExpr value = compile(property, property_at);
    members.push_back(builder_.add("member", g::sequence({g::literal(key), json_.colon(), std::move(value)})));
    names.push_back(g::json_escape(name));
  }
  size_t n = members.size();
  std::vector<g::RuleId> rest_first(n + 1), rest_after(n + 1);
  for (size_t i = 0; i <= n; ++i) {
    rest_first[i] = builder_.declare("members");
    rest_after[i] = builder_.declare("members");
  }
  for (size_t i = 0; i <= n; ++i) {
    for (bool first : {true, false}) {
      g::RuleId rule = first ? rest_first[i] : rest_after[i];
      if (i == n) {
        builder_.define(rule, additional_members(schema, names, first, at));
        continue;
      }
      std::vector<g::GrammarExpr> take;
      if (!first) take.push_back(json_.comma());
      take.push_back(g::rule_ref(members[i]));
      take.push_back(g::rule_ref(rest_after[i + 1]));
      auto [name, property] = *std::next(properties.items().begin(), static_cast<std::ptrdiff_t>(i));
      if (required.contains(name)) {
        builder_.define(rule, g::sequence(std::move(take)));
      } else {
        builder_.define(rule, g::choice({g::sequence(std::move(take)),
                                         g::rule_ref(first ? rest_first[i + 1] : rest_after[i + 1])}));
      }
    }
  }
  return g::sequence({g::literal("{"), g::rule_ref(rest_first[0]), g::literal("}")});
}

g::GrammarExpr SchemaCompiler::additional_members(const Json& schema, const std::vector<std::string>& names,
                                                  bool first, const std::string& at) {
  Json additional = schema.contains("additionalProperties") ? schema["additionalProperties"]
                                                             : Json(!options_.strict_additional_properties);
  if (additional.is_boolean() && !additional.get<bool>()) return g::empty();
  g::GrammarExpr value = compile(additional, at + "/additionalProperties");
  g::GrammarExpr key = names.empty() ? json_.string() : json_.string_not_in(names);
  g::RuleId member = builder_.add("extra_member", g::sequence({std::move(key), json_.colon(), std::move(value)}));
  g::GrammarExpr more = g::repeat(g::sequence({json_.comma(), g::rule_ref(member)}), 0, g::kUnbounded);
  if (!first) return more;
  return g::optional(g::sequence({g::rule_ref(member), std::move(more)}));
}

g::GrammarExpr SchemaCompiler::array(const Json& schema, const std::string& at) {
  std::vector<g::RuleId> prefix;
  if (schema.contains("prefixItems")) {
    const Json& items = schema["prefixItems"];
    if (!items.is_array()) fail(at + "/prefixItems", "prefixItems must be an array of schemas");
    for (size_t i = 0; i < items.size(); ++i) {
      prefix.push_back(builder_.add("prefix_item", compile(items[i], str_cat(at, "/prefixItems/", i))));
    }
  }
  uint32_t low = count(schema, "minItems", at).value_or(0);
  uint32_t high = count(schema, "maxItems", at).value_or(g::kUnbounded);
  std::optional<g::RuleId> rest;
  if (schema.contains("items") && schema["items"].is_array()) {
    fail(at + "/items", "items as an array (draft 4 tuples) is not supported: use prefixItems");
  }
  if (schema.contains("items") && schema["items"] == Json(false)) {
    high = std::min<uint32_t>(high, static_cast<uint32_t>(prefix.size()));
  } else {
    rest = builder_.add("item", schema.contains("items") ? compile(schema["items"], at + "/items") : json_.value());
  }
  if (low > high) fail(at, "minItems is greater than the number of items allowed");
  // Element k (0-based): prefix[k], then `rest`; elements at or past `low` are optional.
  std::function<g::GrammarExpr(uint32_t)> from = [&](uint32_t k) -> g::GrammarExpr {
    if (k >= high) return g::empty();
    g::GrammarExpr separator = k == 0 ? g::empty() : json_.comma();
    if (k < prefix.size()) {
      g::GrammarExpr here = g::sequence({std::move(separator), g::rule_ref(prefix[k]), from(k + 1)});
      return k < low ? std::move(here) : g::optional(std::move(here));
    }
    uint32_t more_low = low > k ? low - k : 0;
    uint32_t more_high = high == g::kUnbounded ? g::kUnbounded : high - k;
    if (k == 0) {
      g::GrammarExpr tail = g::repeat(g::sequence({json_.comma(), g::rule_ref(*rest)}), more_low > 0 ? more_low - 1 : 0,
                                      more_high == g::kUnbounded ? g::kUnbounded : more_high - 1);
      g::GrammarExpr all = g::sequence({g::rule_ref(*rest), std::move(tail)});
      return more_low > 0 ? std::move(all) : g::optional(std::move(all));
    }
    return g::repeat(g::sequence({json_.comma(), g::rule_ref(*rest)}), more_low, more_high);
  };
  return g::sequence({g::literal("["), from(0), g::literal("]")});
}

}  // namespace

JsonSchemaError::JsonSchemaError(std::string pointer, const std::string& message)
    : std::invalid_argument(str_cat("response_format.json_schema.schema", pointer.empty() ? "" : " at ",
                                    pointer, ": ", message)),
      pointer_(std::move(pointer)) {}

g::Grammar json_schema_grammar(const Json& schema, const JsonSchemaGrammarOptions& options) {
  return SchemaCompiler(schema, options).compile_root();
}

g::Grammar json_object_grammar() {
  g::GrammarBuilder builder;
  g::JsonGrammar json(builder);
  g::RuleId root = builder.add("root", json.any_object());
  return builder.build(root);
}

}  // namespace strata::openai
