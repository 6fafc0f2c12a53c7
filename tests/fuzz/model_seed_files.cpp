#include "tests/fuzz/model_seed_files.h"

#include <string>
#include <utility>

#include "dev/random_model.h"
#include "model/gguf/gguf_writer.h"
#include "model/tokenizer/byte_level.h"
#include "model/tokenizer/tokenizer_keys.h"
#include "model/tokenizer/vocab.h"

namespace strata {
namespace {

namespace keys = tokenizer_keys;

struct TokenList {
  std::vector<std::string> texts;
  std::vector<int32_t> types;
  std::vector<float> scores;

  void add(std::string text, TokenType type = TokenType::kNormal, float score = 0.0f) {
    texts.push_back(std::move(text));
    types.push_back(static_cast<int32_t>(type));
    scores.push_back(score);
  }
};

// SentencePiece ("llama"): <unk> <s> </s>, a few byte tokens and pieces.
int64_t set_spm_tokenizer(GgufWriter& writer) {
  TokenList list;
  list.add("<unk>", TokenType::kUnknown);
  list.add("<s>", TokenType::kControl);
  list.add("</s>", TokenType::kControl);
  list.add("<0x0A>", TokenType::kByte);
  list.add("<0xC3>", TokenType::kByte);
  list.add("<0xA9>", TokenType::kByte);
  list.add("<think>", TokenType::kUserDefined);
  const char* pieces[] = {"\xE2\x96\x81", "a", "b", "c", "e", "h", "l", "o",
                          "\xE2\x96\x81h", "he", "ll", "lo", "\xE2\x96\x81he", "hello"};
  float score = 0.0f;
  for (const char* piece : pieces) list.add(piece, TokenType::kNormal, score -= 1.0f);
  writer.set(keys::kModel, "llama");
  writer.set(keys::kTokens, GgufValue::string_array(list.texts));
  writer.set(keys::kScores, GgufValue::f32_array(list.scores));
  writer.set(keys::kTokenTypes, GgufValue::i32_array(list.types));
  writer.set(keys::kBosId, uint32_t{1});
  writer.set(keys::kEosId, uint32_t{2});
  writer.set(keys::kUnknownId, uint32_t{0});
  writer.set(keys::kAddBos, true);
  return static_cast<int64_t>(list.texts.size());
}

// Byte-level BPE ("gpt2"): a few byte tokens, merges, and chat control tokens.
int64_t set_bpe_tokenizer(GgufWriter& writer, const char* pre) {
  TokenList list;
  for (const char* bytes : {" ", "a", "b", "h", "i", "\n", "!"}) list.add(byte_level_encode(bytes));
  const std::vector<std::string> merges = {byte_level_encode(" ") + " h", "h i",
                                           byte_level_encode(" h") + " i", "a b"};
  for (const char* merged : {" h", "hi", " hi", "ab"}) list.add(byte_level_encode(merged));
  for (const char* special : {"<|im_start|>", "<|im_end|>", "<|endoftext|>"}) {
    list.add(special, TokenType::kControl);
  }
  writer.set(keys::kModel, "gpt2");
  writer.set(keys::kPre, pre);
  writer.set(keys::kTokens, GgufValue::string_array(list.texts));
  writer.set(keys::kTokenTypes, GgufValue::i32_array(list.types));
  writer.set(keys::kMerges, GgufValue::string_array(merges));
  writer.set(keys::kEosId, static_cast<uint32_t>(list.texts.size() - 2));
  writer.set(keys::kEotId, static_cast<uint32_t>(list.texts.size() - 2));
  return static_cast<int64_t>(list.texts.size());
}

ModelConfig tiny_config(Architecture arch, int64_t n_vocab) {
  ModelConfig c;
  c.arch = arch;
  c.context_length = 64;
  c.n_embd = 8;
  c.n_layers = 1;
  c.n_heads = 2;
  c.n_kv_heads = 1;
  c.head_dim = 4;
  c.n_ffn = 16;
  c.n_vocab = n_vocab;
  return c;
}

GgufSeedFile llama_spm() {
  GgufWriter writer;
  const int64_t n_vocab = set_spm_tokenizer(writer);
  writer.set(keys::kChatTemplate, "{{ bos_token }}[INST] <<SYS>> {{ m }} [/INST]");
  add_random_model(writer, {.config = tiny_config(Architecture::kLlama, n_vocab),
                            .type = WeightType::kF32, .seed = 1, .name = "fuzz-llama",
                            .rope_scaling = std::nullopt});
  return {"llama_spm_f32.gguf", writer.serialize()};
}

GgufSeedFile llama_bpe_rope_freqs() {
  GgufWriter writer(3, 64);
  const int64_t n_vocab = set_bpe_tokenizer(writer, "llama-bpe");
  writer.set(keys::kChatTemplate, "<|start_header_id|>{{ role }}<|end_header_id|>");
  ModelConfig config = tiny_config(Architecture::kLlama, n_vocab);
  config.has_rope_freqs = true;
  config.tied_output = true;
  add_random_model(writer, {.config = config, .type = WeightType::kF16, .seed = 2,
                            .name = "fuzz-llama3",
                            .rope_scaling = Llama3RopeScaling{.factor = 8.0f,
                                                              .low_freq_factor = 1.0f,
                                                              .high_freq_factor = 4.0f,
                                                              .original_context_length = 16}});
  return {"llama_bpe_f16_rope_freqs.gguf", writer.serialize()};
}

GgufSeedFile qwen2_bf16() {
  GgufWriter writer(2);
  const int64_t n_vocab = set_bpe_tokenizer(writer, "qwen2");
  writer.set(keys::kChatTemplate, "<|im_start|>{{ role }}\n{{ content }}<|im_end|>");
  add_random_model(writer, {.config = tiny_config(Architecture::kQwen2, n_vocab),
                            .type = WeightType::kBF16, .seed = 3, .name = "fuzz-qwen2",
                            .rope_scaling = std::nullopt});
  return {"qwen2_bpe_bf16.gguf", writer.serialize()};
}

// Rows of 32 so that the matrices are Q4_0 blocks.
GgufSeedFile qwen3_q4_0() {
  GgufWriter writer;
  const int64_t n_vocab = set_bpe_tokenizer(writer, "qwen2");
  writer.set(keys::kChatTemplate, "<|im_start|>{{ role }}<think></think><|im_end|>");
  ModelConfig config = tiny_config(Architecture::kQwen3, n_vocab);
  config.n_embd = 32;
  config.n_ffn = 32;
  config.n_heads = 1;
  config.head_dim = 32;
  config.tied_output = true;
  add_random_model(writer, {.config = config, .type = WeightType::kQ4_0, .seed = 4,
                            .name = "fuzz-qwen3", .rope_scaling = std::nullopt});
  return {"qwen3_bpe_q4_0.gguf", writer.serialize()};
}

}  // namespace

std::vector<GgufSeedFile> model_seed_files() {
  return {llama_spm(), llama_bpe_rope_freqs(), qwen2_bf16(), qwen3_q4_0()};
}

}  // namespace strata
