// LoadedModel: everything Strata reads from one GGUF file — the mapped file,
// its hyperparameters, the weights (views into the map), the tokenizer and
// the chat format. Immutable once open; any thread may read it.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/chat/chat_format.h"
#include "model/chat/chat_render.h"
#include "model/gguf/gguf_file.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "model/tokenizer/tokenizer.h"

namespace strata {

class LoadedModel {
 public:
  // Throws std::runtime_error naming the path and what is wrong with the file.
  static std::unique_ptr<LoadedModel> open(const std::string& path);

  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  const std::string& path() const { return path_; }
  const GgufFile& file() const { return file_; }
  const ModelConfig& config() const { return weights_->config(); }
  const ModelWeights& weights() const { return *weights_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const ChatFormat& chat_format() const { return chat_format_; }

  // The conversation in the model's chat format with the generation prompt,
  // tokenized as Hugging Face's apply_chat_template does: special-token text
  // of the template becomes special tokens, and no extra BOS is added (the
  // template writes it). Throws std::invalid_argument for a conversation the
  // template rejects.
  std::vector<TokenId> encode_chat(std::span<const ChatMessage> messages) const;

 private:
  explicit LoadedModel(std::string path);

  std::string path_;
  GgufFile file_;
  std::unique_ptr<ModelWeights> weights_;  // views into file_
  std::unique_ptr<Tokenizer> tokenizer_;
  ChatFormat chat_format_;
};

}  // namespace strata
