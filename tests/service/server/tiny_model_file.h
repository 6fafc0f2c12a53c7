// A tiny Llama model with the real Llama 2 tokenizer and the Llama 2 chat
// template, written with the project's GGUF writer (what `strata dev
// make-model` does), for the server tests.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "dev/hf_tokenizer_import.h"
#include "dev/random_model.h"
#include "model/gguf/gguf_writer.h"
#include "model/model_config.h"

namespace strata::testing {

struct TinyModelFile {
  int64_t context_length = 2048;
  int64_t layers = 2;
  bool chat_template = true;  // Llama 2's; without it the chatml fallback applies
};

// n_kv_heads 2, head_dim 16: one KV block of 16 tokens is layers * 2 KiB in f16.
inline void write_tiny_model(const std::string& path, const TinyModelFile& shape = {}) {
  GgufWriter writer;
  int64_t n_vocab = 0;
  for (auto& [key, value] : import_hf_tokenizer(resolve_hf_tokenizer_dir("llama2"))) {
    if (key == "tokenizer.ggml.tokens") {
      n_vocab = static_cast<int64_t>(value.as_array()->items.size());
    }
    writer.set(key, std::move(value));
  }
  if (shape.chat_template) {
    std::ifstream in(std::string(STRATA_SOURCE_DIR) + "/tests/data/chat_templates/llama2.jinja");
    std::ostringstream text;
    text << in.rdbuf();
    writer.set("tokenizer.chat_template", text.str());
  }
  ModelConfig c;
  c.arch = Architecture::kLlama;
  c.n_embd = 64;
  c.n_layers = shape.layers;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = 16;
  c.n_ffn = 128;
  c.context_length = shape.context_length;
  c.n_vocab = n_vocab;
  c.rms_norm_eps = 1e-5f;
  c.rope_freq_base = 10000.0f;
  add_random_model(writer, RandomModelOptions{.config = c, .type = WeightType::kF32, .seed = 3,
                                              .name = "server-test", .rope_scaling = std::nullopt});
  writer.write(path);
}

}  // namespace strata::testing
