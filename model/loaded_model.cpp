#include "model/loaded_model.h"

#include <stdexcept>

#include "common/log.h"
#include "common/str_cat.h"

namespace strata {
namespace {

std::string token_text_or_empty(const Tokenizer& tokenizer, std::optional<TokenId> id) {
  return id && tokenizer.is_valid(*id) ? tokenizer.token_text(*id) : std::string();
}

}  // namespace

LoadedModel::LoadedModel(std::string path) : path_(std::move(path)) {}

std::unique_ptr<LoadedModel> LoadedModel::open(const std::string& path,
                                               const std::optional<std::string>& chat_template) {
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
    model->open_chat_template(chat_template);
  } catch (const std::exception& e) {
    throw std::runtime_error(str_cat(path, ": ", e.what()));
  }
  return model;
}

void LoadedModel::open_chat_template(const std::optional<std::string>& chosen) {
  const std::string* in_file = file_.find_string("tokenizer.chat_template");
  std::string source;
  if (chosen) {
    source = *chosen;
    has_own_chat_template_ = true;
  } else if (in_file != nullptr && !in_file->empty()) {
    source = *in_file;
    has_own_chat_template_ = true;
  } else {
    log_warning("the model has no chat template (tokenizer.chat_template); using ChatML, "
                "which may not be the format the model was trained on");
    source = std::string(ChatTemplate::chatml_source());
  }
  try {
    chat_template_ = std::make_unique<ChatTemplate>(
        std::move(source), token_text_or_empty(*tokenizer_, tokenizer_->bos()),
        token_text_or_empty(*tokenizer_, tokenizer_->eos()));
  } catch (const std::exception& e) {
    throw ModelError(str_cat(chosen ? "the chat template given" : "the model's chat template",
                             " cannot be run: ", e.what(),
                             ". Give a template that can with --chat-template FILE."));
  }
}

LoadedModel::ChatPrompt LoadedModel::encode_chat(const ChatTemplateInput& input) const {
  ChatPrompt prompt{.text = chat_template_->render(input), .tokens = {}};
  prompt.tokens =
      tokenizer_->encode(prompt.text, EncodeOptions{.add_special = false, .parse_special = true});
  return prompt;
}

}  // namespace strata
