#include "tests/fuzz/gguf_seed_files.h"

#include <cstdint>
#include <limits>

#include "common/str_cat.h"
#include "model/gguf/gguf_writer.h"

namespace strata {
namespace {

// Deterministic filler for tensor bytes; the reader never looks inside them.
std::vector<std::byte> filler(size_t n, uint8_t seed) {
  std::vector<std::byte> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>((i * 131 + seed * 17) & 0xff);
  return out;
}

void add(GgufWriter& writer, const std::string& name, std::vector<uint64_t> dims, WeightType type,
         uint8_t seed) {
  uint64_t n_elems = 1;
  for (uint64_t d : dims) n_elems *= d;
  writer.add_tensor_bytes(name, dims, type, filler(weight_bytes(type, n_elems).value(), seed));
}

GgufSeedFile tiny() {
  GgufWriter writer;
  writer.set("general.architecture", "llama");
  add(writer, "w", {4}, WeightType::kF32, 1);
  return {"v3_tiny.gguf", writer.serialize()};
}

GgufSeedFile every_type_v2() {
  using V = GgufValue;
  GgufWriter writer(2);
  writer.set("u8", uint8_t{7});
  writer.set("i8", int8_t{-7});
  writer.set("u16", uint16_t{700});
  writer.set("i16", int16_t{-700});
  writer.set("u32", uint32_t{70000});
  writer.set("i32", int32_t{-70000});
  writer.set("f32", 0.5f);
  writer.set("bool", true);
  writer.set("string", "text");
  writer.set("u64", std::numeric_limits<uint64_t>::max());
  writer.set("i64", int64_t{-1});
  writer.set("f64", 2.5);
  writer.set("array.bool", V::array(GgufType::kBool, {true, false}));
  writer.set("array.u16", V::array(GgufType::kUint16, {uint16_t{1}, uint16_t{2}}));
  writer.set("array.f64", V::array(GgufType::kFloat64, {1.0, -1.0}));
  writer.set("array.strings", V::string_array({"a", "bc", ""}));
  writer.set("array.empty", V::array(GgufType::kString, {}));
  writer.set("array.nested", V::array(GgufType::kArray, {V::i32_array({1, 2}), V::i32_array({3})}));
  writer.set("array.nested2",
             V::array(GgufType::kArray, {V::array(GgufType::kArray, {V::string_array({"x"})})}));
  add(writer, "a.weight", {8, 2}, WeightType::kF16, 2);
  add(writer, "b.weight", {3}, WeightType::kF32, 3);
  return {"v2_every_type.gguf", writer.serialize()};
}

GgufSeedFile quantized_unaligned() {
  GgufWriter writer(3, 1);
  writer.set("general.name", "packed");
  add(writer, "q8_0.weight", {32, 2}, WeightType::kQ8_0, 4);
  add(writer, "q4_k.weight", {256}, WeightType::kQ4_K, 5);
  add(writer, "q4_1.weight", {32}, WeightType::kQ4_1, 6);
  return {"v3_align1_quantized.gguf", writer.serialize()};
}

GgufSeedFile llama_like() {
  GgufWriter writer(3, 64);
  writer.set("general.architecture", "llama");
  writer.set("llama.block_count", uint32_t{1});
  writer.set("llama.embedding_length", uint32_t{32});
  writer.set("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> token_types;
  for (int i = 0; i < 24; ++i) {
    tokens.push_back(str_cat("tok", i));
    scores.push_back(-static_cast<float>(i));
    token_types.push_back(i < 3 ? 3 : 1);
  }
  writer.set("tokenizer.ggml.model", "gpt2");
  writer.set("tokenizer.ggml.tokens", GgufValue::string_array(tokens));
  writer.set("tokenizer.ggml.scores", GgufValue::f32_array(scores));
  writer.set("tokenizer.ggml.token_type", GgufValue::i32_array(token_types));
  writer.set("tokenizer.ggml.merges", GgufValue::string_array({"t o", "to k"}));
  writer.set("tokenizer.chat_template", "{% for m in messages %}{{ m.content }}{% endfor %}");
  add(writer, "token_embd.weight", {32, 24}, WeightType::kQ8_0, 7);
  add(writer, "blk.0.attn_norm.weight", {32}, WeightType::kF32, 8);
  add(writer, "output_norm.weight", {32}, WeightType::kBF16, 9);
  return {"v3_align64_llama.gguf", writer.serialize()};
}

GgufSeedFile metadata_only() {
  GgufWriter writer;
  writer.set("general.type", "vocab");
  writer.set("count", uint64_t{3});
  return {"v3_metadata_only.gguf", writer.serialize()};
}

GgufSeedFile many_dims() {
  GgufWriter writer(3, 16);
  for (int i = 0; i < 8; ++i) {
    std::vector<uint64_t> dims(static_cast<size_t>(i % 4 + 1), 2);
    add(writer, str_cat("t", i), dims, i % 2 ? WeightType::kF16 : WeightType::kF32,
        static_cast<uint8_t>(10 + i));
  }
  return {"v3_align16_many_dims.gguf", writer.serialize()};
}

}  // namespace

std::vector<GgufSeedFile> gguf_seed_files() {
  return {tiny(),       every_type_v2(), quantized_unaligned(),
          llama_like(), metadata_only(), many_dims()};
}

}  // namespace strata
