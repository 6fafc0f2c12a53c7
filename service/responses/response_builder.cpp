#include "service/responses/response_builder.h"

#include "service/openai/random_id.h"
#include "service/openai/response_format.h"

namespace strata::responses {

using openai::Json;

namespace {

Json usage_json(const Usage& usage) {
  return {{"input_tokens", usage.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", usage.cached_prompt_tokens}}},
          {"output_tokens", usage.completion_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens}};
}

}  // namespace

ResponseBuilder::ResponseBuilder(std::string id, int64_t created_at, std::string model,
                                 Json echo) {
  response_ = {{"id", std::move(id)},
               {"object", "response"},
               {"created_at", created_at},
               {"status", "in_progress"},
               {"error", nullptr},
               {"incomplete_details", nullptr},
               {"model", std::move(model)},
               {"output", Json::array()},
               {"previous_response_id", nullptr},
               {"store", false},
               {"truncation", "disabled"},
               {"usage", nullptr}};
  for (auto& [key, value] : echo.items()) response_[key] = value;
}

std::string ResponseBuilder::event(const std::string& type, Json data) {
  Json payload = {{"type", type}, {"sequence_number", sequence_++}};
  for (auto& [key, value] : data.items()) payload[key] = std::move(value);
  return "event: " + type + "\ndata: " + openai::dump_json(payload) + "\n\n";
}

std::string ResponseBuilder::start() {
  std::string out = event("response.created", {{"response", response_}});
  return out + event("response.in_progress", {{"response", response_}});
}

std::string ResponseBuilder::open_item(ItemKind kind, Json item) {
  std::string out = close_item();
  open_ = kind;
  text_.clear();
  response_["output"].push_back(item);
  const int64_t index = static_cast<int64_t>(response_["output"].size()) - 1;
  out += event("response.output_item.added", {{"output_index", index}, {"item", item}});
  if (kind == ItemKind::kMessage) {
    out += event("response.content_part.added",
                 {{"item_id", item["id"]}, {"output_index", index}, {"content_index", 0},
                  {"part", {{"type", "output_text"}, {"text", ""}, {"annotations", Json::array()}}}});
  } else if (kind == ItemKind::kReasoning) {
    out += event("response.content_part.added",
                 {{"item_id", item["id"]}, {"output_index", index}, {"content_index", 0},
                  {"part", {{"type", "reasoning_text"}, {"text", ""}}}});
  }
  return out;
}

std::string ResponseBuilder::close_item() {
  if (open_ == ItemKind::kNone) return {};
  Json& item = open_item_json();
  const Json id = item["id"];
  const int64_t index = static_cast<int64_t>(response_["output"].size()) - 1;
  std::string out;
  if (open_ == ItemKind::kFunctionCall) {
    item["arguments"] = text_;
    item["status"] = "completed";
    out += event("response.function_call_arguments.done",
                 {{"item_id", id}, {"output_index", index}, {"name", item["name"]},
                  {"arguments", text_}});
  } else {
    const bool message = open_ == ItemKind::kMessage;
    Json part = message ? Json{{"type", "output_text"}, {"text", text_},
                               {"annotations", Json::array()}}
                        : Json{{"type", "reasoning_text"}, {"text", text_}};
    out += event(message ? "response.output_text.done" : "response.reasoning_text.done",
                 {{"item_id", id}, {"output_index", index}, {"content_index", 0},
                  {"text", text_}});
    out += event("response.content_part.done", {{"item_id", id}, {"output_index", index},
                                                {"content_index", 0}, {"part", part}});
    item["content"] = Json::array({part});
    if (message) item["status"] = "completed";
  }
  out += event("response.output_item.done", {{"output_index", index}, {"item", item}});
  open_ = ItemKind::kNone;
  return out;
}

std::string ResponseBuilder::on_reply_events(std::span<const ReplyEvent> events) {
  if (done_) return {};
  std::string out;
  for (const ReplyEvent& reply : events) {
    const int64_t index = static_cast<int64_t>(response_["output"].size()) - 1;
    switch (reply.kind) {
      case ReplyEventKind::kContent:
        if (open_ != ItemKind::kMessage) {
          out += open_item(ItemKind::kMessage,
                           {{"type", "message"}, {"id", openai::random_id("msg_")},
                            {"status", "in_progress"}, {"role", "assistant"},
                            {"content", Json::array()}});
        }
        text_ += reply.text;
        out += event("response.output_text.delta",
                     {{"item_id", open_item_json()["id"]},
                      {"output_index", static_cast<int64_t>(response_["output"].size()) - 1},
                      {"content_index", 0}, {"delta", reply.text}});
        break;
      case ReplyEventKind::kReasoning:
        if (open_ != ItemKind::kReasoning) {
          out += open_item(ItemKind::kReasoning, {{"type", "reasoning"},
                                                  {"id", openai::random_id("rs_")},
                                                  {"summary", Json::array()},
                                                  {"content", Json::array()}});
        }
        text_ += reply.text;
        out += event("response.reasoning_text.delta",
                     {{"item_id", open_item_json()["id"]},
                      {"output_index", static_cast<int64_t>(response_["output"].size()) - 1},
                      {"content_index", 0}, {"delta", reply.text}});
        break;
      case ReplyEventKind::kToolCallBegin:
        out += open_item(ItemKind::kFunctionCall,
                         {{"type", "function_call"}, {"id", openai::random_id("fc_")},
                          {"call_id", openai::random_id("call_")}, {"name", reply.text},
                          {"arguments", ""}, {"status", "in_progress"}});
        break;
      case ReplyEventKind::kToolCallArguments:
        if (open_ != ItemKind::kFunctionCall) break;  // the parser closes a call before the next
        text_ += reply.text;
        out += event("response.function_call_arguments.delta",
                     {{"item_id", open_item_json()["id"]}, {"output_index", index},
                      {"delta", reply.text}});
        break;
    }
  }
  return out;
}

std::string ResponseBuilder::finish(FinishReason finish, const Usage& usage) {
  if (done_) return {};
  done_ = true;
  std::string out = close_item();
  const bool cut = finish == FinishReason::kLength;
  response_["status"] = cut ? "incomplete" : "completed";
  if (cut) response_["incomplete_details"] = {{"reason", "max_output_tokens"}};
  response_["usage"] = usage_json(usage);
  return out + event(cut ? "response.incomplete" : "response.completed", {{"response", response_}});
}

std::string ResponseBuilder::on_error(const openai::ApiError& error) {
  if (done_) return {};
  done_ = true;
  response_["status"] = "failed";
  return event("error", {{"code", error.code ? Json(*error.code) : Json(error.type)},
                         {"message", error.message},
                         {"param", error.param ? Json(*error.param) : Json()}});
}

}  // namespace strata::responses
