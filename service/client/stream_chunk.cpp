#include "service/client/stream_chunk.h"

namespace strata {
namespace {

const nlohmann::json* member(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::optional<std::string> string_member(const nlohmann::json* object, const char* key) {
  if (object == nullptr) return std::nullopt;
  const nlohmann::json* value = member(*object, key);
  if (value == nullptr || !value->is_string()) return std::nullopt;
  return value->get<std::string>();
}

}  // namespace

StreamChunk read_stream_chunk(const nlohmann::json& chunk) {
  StreamChunk parts;
  const nlohmann::json* choices = member(chunk, "choices");
  if (choices != nullptr && choices->is_array() && !choices->empty()) {
    const nlohmann::json& choice = choices->front();
    const nlohmann::json* delta = member(choice, "delta");  // chat
    parts.text = delta != nullptr ? string_member(delta, "content").value_or("")
                                  : string_member(&choice, "text").value_or("");
    parts.finish_reason = string_member(&choice, "finish_reason");
  }
  const nlohmann::json* usage = member(chunk, "usage");
  if (usage != nullptr && usage->is_object()) parts.usage = *usage;
  return parts;
}

}  // namespace strata
