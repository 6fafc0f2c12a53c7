#include "model/chat/jinja/jinja_value.h"

#include <algorithm>

#include "model/chat/jinja/jinja_error.h"

namespace strata::jinja {
namespace {

struct NamedFunction {
  std::string name;
  Function function;
};

struct DictStorage {
  ValueDict items;
  // Empty where every key is a string (as dicts from requests are); else the key of each
  // item, in order.
  std::vector<Value> keys;
};

const DictStorage& storage_of(const std::shared_ptr<void>& ptr) {
  return *static_cast<const DictStorage*>(ptr.get());
}

const std::string& empty_string() {
  static const std::string kEmpty;
  return kEmpty;
}

bool equal_dicts(const Value& a, const Value& b) {
  if (a.as_dict().size() != b.as_dict().size()) return false;
  for (size_t i = 0; i < a.as_dict().size(); ++i) {
    const Value* match = b.find_key(a.dict_key(i));
    if (match == nullptr || !equal(a.as_dict()[i].second, *match)) return false;
  }
  return true;
}

bool is_hashable(const Value& key) {
  return key.is_none() || key.is_number() || key.is_string();
}

}  // namespace

bool Object::set_attribute(std::string_view /*name*/, Value /*value*/) { return false; }

Value::Value(std::string value)
    : kind_(Kind::kString), ptr_(std::make_shared<std::string>(std::move(value))) {}

Value Value::none() {
  Value v;
  v.kind_ = Kind::kNone;
  return v;
}

Value Value::list(ValueList items) {
  Value v;
  v.kind_ = Kind::kList;
  v.ptr_ = std::make_shared<ValueList>(std::move(items));
  return v;
}

Value Value::tuple(ValueList items) {
  Value v = list(std::move(items));
  v.kind_ = Kind::kTuple;
  return v;
}

Value Value::dict(ValueDict items) {
  Value v;
  v.kind_ = Kind::kDict;
  v.ptr_ = std::make_shared<DictStorage>(DictStorage{std::move(items), {}});
  return v;
}

Value Value::dict_with_keys(std::vector<std::pair<Value, Value>> items) {
  auto storage = std::make_shared<DictStorage>();
  bool all_strings = true;
  for (auto& [key, value] : items) {
    if (!is_hashable(key)) throw RenderError("unhashable type: '" + std::string(type_name(key)) + "'", 0);
    all_strings = all_strings && key.is_string();
    // An init-capture: clang before 16 cannot capture a structured binding.
    auto same = std::find_if(storage->keys.begin(), storage->keys.end(),
                             [&wanted = key](const Value& k) { return equal(k, wanted); });
    if (same != storage->keys.end()) {
      storage->items[static_cast<size_t>(same - storage->keys.begin())].second = std::move(value);
      continue;
    }
    storage->items.emplace_back(key.is_string() ? key.as_string() : std::string(), std::move(value));
    storage->keys.push_back(std::move(key));
  }
  if (all_strings) storage->keys.clear();
  Value v;
  v.kind_ = Kind::kDict;
  v.ptr_ = std::move(storage);
  return v;
}

const ValueDict& Value::as_dict() const { return storage_of(ptr_).items; }

Value Value::dict_key(size_t i) const {
  const DictStorage& storage = storage_of(ptr_);
  return storage.keys.empty() ? Value(storage.items[i].first) : storage.keys[i];
}

Value Value::function(std::string name, Function function) {
  Value v;
  v.kind_ = Kind::kFunction;
  v.ptr_ = std::make_shared<NamedFunction>(NamedFunction{std::move(name), std::move(function)});
  return v;
}

Value Value::object(std::shared_ptr<Object> object) {
  Value v;
  v.kind_ = Kind::kObject;
  v.ptr_ = std::move(object);
  return v;
}

Value Value::undefined(std::string message) {
  Value v;
  v.ptr_ = std::make_shared<std::string>(std::move(message));
  return v;
}

const Function& Value::as_function() const {
  return static_cast<const NamedFunction*>(ptr_.get())->function;
}

const std::string& Value::function_name() const {
  return static_cast<const NamedFunction*>(ptr_.get())->name;
}

const std::string& Value::undefined_message() const {
  return ptr_ ? *static_cast<const std::string*>(ptr_.get()) : empty_string();
}

const Value* Value::find(std::string_view key) const {
  const DictStorage& storage = storage_of(ptr_);
  for (size_t i = 0; i < storage.items.size(); ++i) {
    if (storage.items[i].first == key && (storage.keys.empty() || storage.keys[i].is_string())) {
      return &storage.items[i].second;
    }
  }
  return nullptr;
}

const Value* Value::find_key(const Value& key) const {
  if (key.is_string()) return find(std::string_view(key.as_string()));
  const DictStorage& storage = storage_of(ptr_);
  for (size_t i = 0; i < storage.keys.size(); ++i) {
    if (equal(storage.keys[i], key)) return &storage.items[i].second;
  }
  return nullptr;
}

bool truthy(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return false;
    case Value::Kind::kBool:
    case Value::Kind::kInt: return value.as_int() != 0;
    case Value::Kind::kFloat: return value.as_double() != 0.0;
    case Value::Kind::kString: return !value.as_string().empty();
    case Value::Kind::kList:
    case Value::Kind::kTuple: return !value.as_list().empty();
    case Value::Kind::kDict: return !value.as_dict().empty();
    case Value::Kind::kFunction:
    case Value::Kind::kObject: return true;
  }
  return true;
}

bool equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return a.as_int() == b.as_int();
    return a.as_double() == b.as_double();
  }
  // Python: [1] != (1,), but both are sequences here only when kinds match.
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.as_string() == b.as_string();
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      return std::equal(a.as_list().begin(), a.as_list().end(), b.as_list().begin(),
                        b.as_list().end(), [](const Value& x, const Value& y) { return equal(x, y); });
    case Value::Kind::kDict: return equal_dicts(a, b);
    case Value::Kind::kFunction: return &a.as_function() == &b.as_function();
    case Value::Kind::kObject: return &a.as_object() == &b.as_object();
    default: return false;
  }
}

std::string_view type_name(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return "Undefined";
    case Value::Kind::kNone: return "NoneType";
    case Value::Kind::kBool: return "bool";
    case Value::Kind::kInt: return "int";
    case Value::Kind::kFloat: return "float";
    case Value::Kind::kString: return "str";
    case Value::Kind::kList: return "list";
    case Value::Kind::kTuple: return "tuple";
    case Value::Kind::kDict: return "dict";
    case Value::Kind::kFunction: return "function";
    case Value::Kind::kObject: return "object";
  }
  return "object";
}

}  // namespace strata::jinja
