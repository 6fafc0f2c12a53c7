// Python's operators on template values, with the sandbox's attribute rules: what
// `a + b`, `a < b`, `x in y`, `obj.name`, `obj[key]` and `obj[a:b:c]` do in a template.
// Failures throw RenderError with Python's or Jinja2's wording.
#pragma once

#include <optional>
#include <string_view>

#include "model/chat/jinja/jinja_ast.h"
#include "model/chat/jinja/jinja_value.h"

namespace strata::jinja {

// Throws the UndefinedError that using `undefined` (for more than printing, testing or
// iterating) raises.
[[noreturn]] void raise_undefined(const Value& undefined);

Value binary_operation(BinaryOp op, const Value& left, const Value& right);
Value negate(const Value& operand);
// Python's a < b etc.; == and != never throw.
bool compare(CompareOp op, const Value& left, const Value& right);
// `item in container`.
bool contains(const Value& container, const Value& item);

// `obj.name`: a method (bound to obj) first, then a dict key or object attribute; else an
// Undefined that remembers the missing attribute.
Value get_attribute(const Value& object, std::string_view name);
// `obj[key]`: a dict key or sequence index first, then an attribute.
Value get_item(const Value& object, const Value& key);
// `obj[start:stop:step]` on a list, tuple or string.
Value get_slice(const Value& object, const Value& start, const Value& stop, const Value& step);

// The items a for loop visits: a list's items, a dict's keys, a string's characters;
// none for Undefined. Throws for values that are not iterable.
ValueList iterate(const Value& value);

// Python's len(x); throws for values without a length. Undefined has length 0.
int64_t length(const Value& value);

// Jinja2's name for a value's type in Undefined messages: "dict object", "None", ...
std::string object_type_name(const Value& value);

}  // namespace strata::jinja
