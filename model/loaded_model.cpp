#include "model/loaded_model.h"

#include <stdexcept>

#include "common/str_cat.h"

namespace strata {
namespace {

std::string token_text_or_empty(const Tokenizer& tokenizer, std::optional<TokenId> id) {
  return id && tokenizer.is_valid(*id) ? tokenizer.token_text(*id) : std::string();
}

}  // namespace

LoadedModel::LoadedModel(std::string path) : path_(std::move(path)) {}

std::unique_ptr<LoadedModel> LoadedModel::open(const std::string& path) {
  std::unique_ptr<LoadedModel> model(new LoadedModel(path));
  try {
    model->file_ = GgufFile::open(path);
    ModelConfig config = read_model_config(model->file_);
    model->weights_ = std::make_unique<ModelWeights>(model->file_, config);
    model->tokenizer_ = Tokenizer::from_gguf(model->file_);
    // Every token needs an embedding row and every sampled row a token to
    // print, so the two must be the same size (llama.cpp sizes the embedding
    // from the token list; converters pad the list to match).
    if (model->tokenizer_->n_vocab() != model->weights_->config().n_vocab) {
      throw ModelError(str_cat("the tokenizer has ", model->tokenizer_->n_vocab(),
                               " tokens but token_embd.weight has ",
                               model->weights_->config().n_vocab, " rows"));
    }
    const std::string* chat_template = model->file_.find_string("tokenizer.chat_template");
    model->chat_format_ = detect_chat_format(chat_template ? *chat_template : "");
  } catch (const std::exception& e) {
    throw std::runtime_error(str_cat(path, ": ", e.what()));
  }
  return model;
}

std::vector<TokenId> LoadedModel::encode_chat(std::span<const ChatMessage> messages) const {
  ChatRenderOptions options;
  options.add_generation_prompt = true;
  options.bos_token = token_text_or_empty(*tokenizer_, tokenizer_->bos());
  options.eos_token = token_text_or_empty(*tokenizer_, tokenizer_->eos());
  std::string text = render_chat(chat_format_, messages, options);
  return tokenizer_->encode(text, EncodeOptions{.add_special = false, .parse_special = true});
}

}  // namespace strata
