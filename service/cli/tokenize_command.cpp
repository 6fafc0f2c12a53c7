// strata tokenize MODEL.gguf TEXT [--special]: the token ids of TEXT as a JSON
// array, with the model's BOS/EOS as its tokenizer adds them.
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "model/gguf/gguf_file.h"
#include "model/tokenizer/tokenizer.h"
#include "service/cli/commands.h"

namespace strata {
namespace {

struct TokenizeOptions {
  std::string model_path;
  std::string text;
  bool special = false;
  bool no_bos = false;
};

void tokenize(const TokenizeOptions& o) {
  GgufFile file = GgufFile::open(o.model_path);
  std::unique_ptr<Tokenizer> tokenizer = Tokenizer::from_gguf(file);
  EncodeOptions encode{.add_special = !o.no_bos, .parse_special = o.special};
  std::cout << nlohmann::json(tokenizer->encode(o.text, encode)).dump() << "\n";
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto o = std::make_shared<TokenizeOptions>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Print the token ids of a text as a JSON array");
  cmd->add_option("model", o->model_path, "GGUF model file")->required();
  cmd->add_option("text", o->text, "Text to tokenize")->required();
  cmd->add_flag("--special", o->special,
                "Turn special-token text such as <|im_start|> into special tokens");
  cmd->add_flag("--no-bos", o->no_bos, "Do not add the model's BOS/EOS tokens");
  cmd->callback([o] { tokenize(*o); });
}

}  // namespace strata
