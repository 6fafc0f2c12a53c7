// json_schema_grammar: compiles a JSON Schema (response_format json_schema) to the
// grammar that constrained decoding enforces, so every reply parses as JSON and
// validates against the schema.
//
// Supported: type (and type arrays), properties, required, additionalProperties
// (false / true / a schema; absent: JsonSchemaGrammarOptions), items, prefixItems,
// minItems, maxItems, enum, const, anyOf, oneOf (treated as anyOf: where branches
// overlap, an output may match several, which oneOf forbids), allOf (its parts merged:
// properties and required joined, other keywords must agree; no additionalProperties
// in or beside it, since JSON Schema would then reject the other parts' properties),
// $ref to "#..." pointers ($defs, definitions, "#" itself; recursion included),
// minLength, maxLength, pattern (json_string_regex.h), format (date, time, date-time,
// uuid, email), minimum, maximum, exclusiveMinimum, exclusiveMaximum (numbers or the
// draft-4 booleans), and the annotations title, description, default, examples,
// $schema, $id, $comment, deprecated, readOnly, writeOnly, which are ignored.
//
// What the grammar writes:
// - compact JSON, one optional space after ':' and ',' (grammar/json_grammar.h);
// - properties in the schema's order, required ones always, optional ones or not;
//   additional properties (when allowed) after them, with ASCII names without escapes
//   that differ from every listed property;
// - integers: bounds enforced exactly; numbers: integral bounds exactly, fractional
//   bounds rounded inwards; at most 15 digits before the point;
// - pattern with minLength/maxLength only when the pattern is anchored and its lengths
//   fall within them; "date" leaves out February 29; "time" always has a time zone.
//
// Pure functions: any thread.
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "grammar/grammar.h"

namespace strata::openai {

using Json = nlohmann::ordered_json;

struct JsonSchemaGrammarOptions {
  // An object schema without "additionalProperties" allows no other properties when
  // true (OpenAI's strict mode) and any other properties when false (JSON Schema's
  // own default).
  bool strict_additional_properties = true;
};

// A schema the compiler cannot enforce: an unsupported keyword or format, a malformed
// value, or constraints that no value meets. pointer() is the JSON pointer of the part
// at fault, within the schema ("" for the root).
class JsonSchemaError : public std::invalid_argument {
 public:
  JsonSchemaError(std::string pointer, const std::string& message);
  const std::string& pointer() const { return pointer_; }

 private:
  std::string pointer_;
};

// Throws JsonSchemaError.
grammar::Grammar json_schema_grammar(const Json& schema, const JsonSchemaGrammarOptions& options = {});

// Any JSON object: response_format {"type": "json_object"}.
grammar::Grammar json_object_grammar();

}  // namespace strata::openai
