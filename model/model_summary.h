// ModelSummary: what `strata info` shows about a GGUF model, gathered without
// loading weights (only the header is read).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "model/model_config.h"

namespace strata {

class GgufFile;

struct ModelSummary {
  ModelConfig config;
  std::string arch;         // general.architecture as written
  std::string name;         // general.name, may be empty
  uint32_t gguf_version = 0;
  uint64_t n_params = 0;    // sum of all tensor element counts
  uint64_t n_weight_bytes = 0;
  std::map<std::string, int> tensor_types;  // "q4_k" -> number of tensors
  std::string tokenizer;    // tokenizer.ggml.model: "llama", "gpt2", or "none"
  int64_t vocab_size = 0;   // tokenizer.ggml.tokens length (0 without a tokenizer)
  // tokenizer.chat_template: its size in bytes, 0 where the file has none (ChatML is then
  // assumed), and how replies rendered by it mark tool calls and reasoning.
  uint64_t chat_template_bytes = 0;
  std::string tool_call_syntax;  // tool_call_syntax_name(): "hermes", "llama3", "none", ...
  std::string reasoning_syntax;  // reasoning_syntax_name(): "think-tags", "none", ...
};

// Throws ModelError when the architecture or hyperparameters are unusable.
ModelSummary summarize_model(const GgufFile& file);

}  // namespace strata
