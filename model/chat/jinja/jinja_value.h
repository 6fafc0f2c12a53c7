// The values a chat template computes with, following Python's data model as Jinja2 sees
// it: None, bool, int, float, str (UTF-8), list, tuple, dict (insertion-ordered, string
// keys), plus Jinja's kinds: Undefined (a missing name or attribute, which remembers why
// it is missing), callables (globals, filters' helpers, bound methods, macros) and
// objects with attributes (namespace(), the `loop` variable).
//
// A Value is immutable once built (lists and dicts are shared, never changed), so a
// template's constants can be shared by renders on several threads. The one exception is
// an Object (namespace, loop), which belongs to a single render.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::jinja {

class Value;
using ValueList = std::vector<Value>;
using ValueDict = std::vector<std::pair<std::string, Value>>;  // in insertion order

// Positional and keyword arguments of one call.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

using Function = std::function<Value(const CallArgs&)>;

// Something with attributes that a render owns: namespace() and `loop`.
class Object {
 public:
  virtual ~Object() = default;
  // The attribute's value, or nullopt where there is none.
  virtual std::optional<Value> attribute(std::string_view name) const = 0;
  // `ns.attr = value`; false where the object does not allow it.
  virtual bool set_attribute(std::string_view name, Value value);
  // Python's repr, e.g. "<Namespace {'a': 1}>".
  virtual std::string repr() const = 0;
};

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kTuple, kDict,
                    kFunction, kObject };

  Value() = default;  // Undefined, with no reason given
  Value(bool value) : kind_(Kind::kBool), int_(value) {}  // NOLINT: implicit like Python
  Value(int64_t value) : kind_(Kind::kInt), int_(value) {}  // NOLINT
  Value(int value) : kind_(Kind::kInt), int_(value) {}  // NOLINT
  Value(double value) : kind_(Kind::kFloat), float_(value) {}  // NOLINT
  Value(std::string value);  // NOLINT
  Value(std::string_view value) : Value(std::string(value)) {}  // NOLINT
  Value(const char* value) : Value(std::string(value)) {}  // NOLINT

  static Value none();
  static Value list(ValueList items);
  static Value tuple(ValueList items);
  static Value dict(ValueDict items);
  // A dict whose keys may be any of None, bool, int, float or str (`{512: 128}` in a
  // template); keys that compare equal (1, 1.0, True) are one key, the last value wins.
  // Throws RenderError for an unhashable key (a list or dict).
  static Value dict_with_keys(std::vector<std::pair<Value, Value>> items);
  static Value function(std::string name, Function function);
  static Value object(std::shared_ptr<Object> object);
  // Undefined, carrying the message an UndefinedError raised by its use will have, e.g.
  // "'foo' is undefined" or "'dict object' has no attribute 'content'".
  static Value undefined(std::string message);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_tuple() const { return kind_ == Kind::kTuple; }
  bool is_sequence() const { return kind_ == Kind::kList || kind_ == Kind::kTuple; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_function() const { return kind_ == Kind::kFunction; }
  bool is_object() const { return kind_ == Kind::kObject; }
  // int or bool, as Python's isinstance(x, int).
  bool is_integral() const { return kind_ == Kind::kInt || kind_ == Kind::kBool; }
  bool is_number() const { return is_integral() || kind_ == Kind::kFloat; }

  bool as_bool() const { return int_ != 0; }
  int64_t as_int() const { return int_; }
  // int, bool or float as a double.
  double as_double() const { return kind_ == Kind::kFloat ? float_ : static_cast<double>(int_); }
  const std::string& as_string() const { return *static_cast<const std::string*>(ptr_.get()); }
  const ValueList& as_list() const { return *static_cast<const ValueList*>(ptr_.get()); }
  // A dict's entries. An entry whose key is not a string has an empty name here: read
  // keys with dict_key().
  const ValueDict& as_dict() const;
  // The key of entry `i` of a dict.
  Value dict_key(size_t i) const;
  const Function& as_function() const;
  const std::string& function_name() const;
  Object& as_object() const { return *static_cast<Object*>(ptr_.get()); }
  // An Undefined's message (see undefined()); empty where none was given.
  const std::string& undefined_message() const;

  // The dict entry for the string `key`, or nullptr.
  const Value* find(std::string_view key) const;
  // The dict entry for `key` of any kind, or nullptr.
  const Value* find_key(const Value& key) const;

 private:
  Kind kind_ = Kind::kUndefined;
  int64_t int_ = 0;
  double float_ = 0;
  // By kind: std::string (string, or an Undefined's message), ValueList (list, tuple),
  // DictStorage, NamedFunction, Object; null for the rest.
  std::shared_ptr<void> ptr_;
};

// Python's bool(x); Undefined is false.
bool truthy(const Value& value);

// Python's x == y: numbers compare across int/float/bool, lists and tuples item by item,
// dicts regardless of order; Undefined equals only Undefined.
bool equal(const Value& a, const Value& b);

// Python's type name, as in TypeError messages: 'int', 'str', 'NoneType', 'list', ...
std::string_view type_name(const Value& value);

}  // namespace strata::jinja
