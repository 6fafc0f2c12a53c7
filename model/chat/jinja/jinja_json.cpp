#include "model/chat/jinja/jinja_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_python_format.h"
#include "model/chat/jinja/jinja_utf8.h"

namespace strata::jinja {
namespace {

void append_unicode_escape(std::string& out, unsigned unit) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "\\u%04x", unit);
  out += buffer;
}

void append_json_string(std::string& out, std::string_view text, bool ensure_ascii) {
  out += '"';
  for (char32_t cp : decode_utf8(text)) {
    switch (cp) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (cp < 0x20 || (ensure_ascii && cp >= 0x7F && cp <= 0x10FFFF)) {
      if (cp >= 0x10000) {  // a UTF-16 surrogate pair, as json.dumps writes it
        const char32_t v = cp - 0x10000;
        append_unicode_escape(out, 0xD800 + (v >> 10));
        append_unicode_escape(out, 0xDC00 + (v & 0x3FF));
      } else {
        append_unicode_escape(out, cp);
      }
    } else {
      append_utf8(out, cp);
    }
  }
  out += '"';
}

class JsonWriter {
 public:
  explicit JsonWriter(const JsonOptions& options)
      : options_(options),
        item_separator_(options.item_separator.value_or(options.indent ? "," : ", ")),
        key_separator_(options.key_separator.value_or(": ")) {}

  void write(const Value& value, int depth) {
    switch (value.kind()) {
      case Value::Kind::kNone: out_ += "null"; return;
      case Value::Kind::kBool: out_ += value.as_bool() ? "true" : "false"; return;
      case Value::Kind::kInt: out_ += std::to_string(value.as_int()); return;
      case Value::Kind::kFloat: write_float(value.as_double()); return;
      case Value::Kind::kString: append_json_string(out_, value.as_string(), options_.ensure_ascii); return;
      case Value::Kind::kList:
      case Value::Kind::kTuple: write_list(value.as_list(), depth); return;
      case Value::Kind::kDict: write_dict(value, depth); return;
      default:
        throw RenderError("Object of type " + std::string(type_name(value)) + " is not JSON serializable", 0);
    }
  }

  std::string take() { return std::move(out_); }

 private:
  void write_float(double value) {
    if (std::isnan(value)) out_ += "NaN";
    else if (std::isinf(value)) out_ += value > 0 ? "Infinity" : "-Infinity";
    else out_ += python_float_repr(value);
  }

  void newline(int depth) {
    if (!options_.indent) return;
    out_ += '\n';
    for (int i = 0; i < depth; ++i) out_ += *options_.indent;
  }

  void write_list(const ValueList& items, int depth) {
    if (items.empty()) {
      out_ += "[]";
      return;
    }
    out_ += '[';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out_ += item_separator_;
      newline(depth + 1);
      write(items[i], depth + 1);
    }
    newline(depth);
    out_ += ']';
  }

  // json.dumps writes a non-string key as text: 512 as "512", True as "true".
  std::string key_text(const Value& key) {
    if (key.is_string()) return key.as_string();
    if (key.is_none()) return "null";
    if (key.is_bool()) return key.as_bool() ? "true" : "false";
    JsonWriter writer(options_);
    writer.write(key, 0);
    return writer.take();
  }

  void write_dict(const Value& dict, int depth) {
    const ValueDict& items = dict.as_dict();
    if (items.empty()) {
      out_ += "{}";
      return;
    }
    std::vector<std::pair<std::string, const Value*>> entries;
    for (size_t i = 0; i < items.size(); ++i) entries.emplace_back(key_text(dict.dict_key(i)), &items[i].second);
    if (options_.sort_keys) {
      std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    out_ += '{';
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) out_ += item_separator_;
      newline(depth + 1);
      append_json_string(out_, entries[i].first, options_.ensure_ascii);
      out_ += key_separator_;
      write(*entries[i].second, depth + 1);
    }
    newline(depth);
    out_ += '}';
  }

  const JsonOptions& options_;
  std::string item_separator_;
  std::string key_separator_;
  std::string out_;
};

}  // namespace

std::string to_json(const Value& value, const JsonOptions& options) {
  JsonWriter writer(options);
  writer.write(value, 0);
  return writer.take();
}

}  // namespace strata::jinja
