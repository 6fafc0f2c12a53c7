// LoadedModel: everything Strata reads from one GGUF file — the mapped file,
// its hyperparameters, the weights (views into the map), the tokenizer and
// the chat template. Immutable once open; any thread may read it.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/chat/chat_template.h"
#include "model/gguf/gguf_file.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "model/tokenizer/tokenizer.h"

namespace strata {

class LoadedModel {
 public:
  // Throws std::runtime_error naming the path and what is wrong with the file, including
  // a chat template Strata cannot run. `chat_template`, where given, replaces the file's
  // tokenizer.chat_template (a template file the user chose).
  static std::unique_ptr<LoadedModel> open(const std::string& path,
                                           const std::optional<std::string>& chat_template = {});

  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  const std::string& path() const { return path_; }
  const GgufFile& file() const { return file_; }
  const ModelConfig& config() const { return weights_->config(); }
  const ModelWeights& weights() const { return *weights_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const ChatTemplate& chat_template() const { return *chat_template_; }
  // False where the file has no chat template and ChatML is assumed.
  bool has_own_chat_template() const { return has_own_chat_template_; }

  // The conversation rendered by the chat template (text) and tokenized as Hugging
  // Face's apply_chat_template does (tokens): special-token text of the template becomes
  // special tokens, and no extra BOS is added (the template writes it). Throws
  // std::invalid_argument for a conversation the template rejects.
  struct ChatPrompt {
    std::string text;
    std::vector<TokenId> tokens;
  };
  ChatPrompt encode_chat(const ChatTemplateInput& input) const;

 private:
  explicit LoadedModel(std::string path);
  // Parses the chosen template, else the file's, else ChatML. Needs tokenizer_.
  void open_chat_template(const std::optional<std::string>& chosen);

  std::string path_;
  GgufFile file_;
  std::unique_ptr<ModelWeights> weights_;  // views into file_
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<ChatTemplate> chat_template_;
  bool has_own_chat_template_ = false;
};

}  // namespace strata
