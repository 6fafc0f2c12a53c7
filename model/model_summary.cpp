#include "model/model_summary.h"

#include "model/chat/chat_template.h"
#include "model/chat/reply/reply_format.h"
#include "model/gguf/gguf_file.h"

namespace strata {

ModelSummary summarize_model(const GgufFile& file) {
  ModelSummary summary;
  summary.config = read_model_config(file);
  summary.arch = std::string(architecture_name(summary.config.arch));
  if (const std::string* name = file.find_string("general.name")) summary.name = *name;
  summary.gguf_version = file.version();
  for (const GgufTensorInfo& tensor : file.tensors()) {
    summary.n_params += tensor.n_elems;
    summary.n_weight_bytes += tensor.n_bytes;
    summary.tensor_types[std::string(weight_type_name(tensor.type))] += 1;
  }

  const std::string* tokenizer = file.find_string("tokenizer.ggml.model");
  summary.tokenizer = tokenizer ? *tokenizer : "none";
  if (const GgufValue* tokens = file.find("tokenizer.ggml.tokens")) {
    if (const GgufArray* array = tokens->as_array()) {
      summary.vocab_size = static_cast<int64_t>(array->items.size());
    }
  }

  // As LoadedModel reads it: an empty template is none, and none means ChatML.
  const std::string* chat_template = file.find_string("tokenizer.chat_template");
  const bool has_template = chat_template != nullptr && !chat_template->empty();
  summary.chat_template_bytes = has_template ? chat_template->size() : 0;
  const ReplyFormat reply =
      detect_reply_format(has_template ? *chat_template : ChatTemplate::chatml_source());
  summary.tool_call_syntax = std::string(tool_call_syntax_name(reply.tool_calls));
  summary.reasoning_syntax = std::string(reasoning_syntax_name(reply.reasoning));
  return summary;
}

}  // namespace strata
