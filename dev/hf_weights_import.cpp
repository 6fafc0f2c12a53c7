#include "dev/hf_weights_import.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "common/log.h"
#include "common/str_cat.h"
#include "dev/random_model.h"
#include "dev/safetensors_reader.h"
#include "model/gguf/gguf_writer.h"
#include "model/model_tensors.h"

namespace strata {
namespace {

// GGUF names of one block's tensors -> the HF names they come from.
constexpr std::pair<std::string_view, std::string_view> kLayerNames[] = {
    {"attn_norm.weight", "input_layernorm.weight"},
    {"attn_q.weight", "self_attn.q_proj.weight"},
    {"attn_k.weight", "self_attn.k_proj.weight"},
    {"attn_v.weight", "self_attn.v_proj.weight"},
    {"attn_output.weight", "self_attn.o_proj.weight"},
    {"ffn_norm.weight", "post_attention_layernorm.weight"},
    {"ffn_gate.weight", "mlp.gate_proj.weight"},
    {"ffn_up.weight", "mlp.up_proj.weight"},
    {"ffn_down.weight", "mlp.down_proj.weight"},
};

std::string hf_name(const std::string& gguf_name) {
  if (gguf_name == "token_embd.weight") return "model.embed_tokens.weight";
  if (gguf_name == "output_norm.weight") return "model.norm.weight";
  if (gguf_name == "output.weight") return "lm_head.weight";
  const size_t dot = gguf_name.find('.', 4);  // "blk.N.rest"
  const std::string layer = gguf_name.substr(4, dot - 4);
  const std::string rest = gguf_name.substr(dot + 1);
  for (const auto& [gguf, hf] : kLayerNames) {
    if (rest == gguf) return str_cat("model.layers.", layer, ".", hf);
  }
  throw std::runtime_error(str_cat("no Hugging Face name for ", gguf_name));
}

WeightType fitting_type(WeightType wanted, uint64_t row_length) {
  if (row_length % weight_type_info(wanted).block_elems == 0) return wanted;
  if (row_length % weight_type_info(WeightType::kQ8_0).block_elems == 0) return WeightType::kQ8_0;
  return WeightType::kF16;
}

int64_t get_int(const nlohmann::json& config, const char* key, const std::string& path) {
  if (!config.contains(key) || !config[key].is_number_integer()) {
    throw std::runtime_error(str_cat(path, ": no integer ", key));
  }
  return config[key].get<int64_t>();
}

}  // namespace

ModelConfig read_hf_llama_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(str_cat(path, ": cannot open"));
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(str_cat(path, ": ", e.what()));
  }
  if (config.value("model_type", "") != "llama") {
    throw std::runtime_error(str_cat(path, ": model_type ", config.value("model_type", "(none)"),
                                     "; only llama checkpoints are imported"));
  }
  if (config.contains("rope_scaling") && !config["rope_scaling"].is_null()) {
    throw std::runtime_error(str_cat(path, ": rope_scaling is not supported by import-weights"));
  }
  ModelConfig c;
  c.arch = Architecture::kLlama;
  c.n_embd = get_int(config, "hidden_size", path);
  c.n_layers = get_int(config, "num_hidden_layers", path);
  c.n_heads = get_int(config, "num_attention_heads", path);
  c.n_kv_heads = config.contains("num_key_value_heads")
                     ? get_int(config, "num_key_value_heads", path)
                     : c.n_heads;
  c.head_dim = config.contains("head_dim") && !config["head_dim"].is_null()
                   ? get_int(config, "head_dim", path)
                   : c.n_embd / std::max<int64_t>(1, c.n_heads);
  c.n_ffn = get_int(config, "intermediate_size", path);
  c.n_vocab = get_int(config, "vocab_size", path);
  c.context_length = get_int(config, "max_position_embeddings", path);
  c.rms_norm_eps = config.value("rms_norm_eps", 1e-5f);
  c.rope_freq_base = config.value("rope_theta", 10000.0f);
  c.tied_output = config.value("tie_word_embeddings", false);
  if (c.n_heads <= 0 || c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads != 0 || c.head_dim % 2 != 0) {
    throw std::runtime_error(str_cat(path, ": ", c.n_heads, " heads, ", c.n_kv_heads,
                                     " KV heads of ", c.head_dim, " do not make a llama shape"));
  }
  return c;
}

std::vector<float> permute_rope_rows(const std::vector<float>& rows, int64_t n_heads,
                                     int64_t head_dim, int64_t row_length) {
  // llama.cpp: w.reshape(n_head, 2, head_dim / 2, in).swapaxes(1, 2).reshape(w.shape),
  // so GGUF row 2i + j of a head is HF row j * head_dim / 2 + i.
  std::vector<float> out(rows.size());
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    for (int64_t i = 0; i < half; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        const float* src = rows.data() + ((h * head_dim) + j * half + i) * row_length;
        float* dst = out.data() + ((h * head_dim) + 2 * i + j) * row_length;
        std::copy(src, src + row_length, dst);
      }
    }
  }
  return out;
}

void add_hf_llama_weights(GgufWriter& writer, const ModelConfig& config,
                          const SafetensorsReader& weights, WeightType type) {
  write_model_config(writer, config);
  std::set<std::string> unused;
  for (const auto& [name, tensor] : weights.tensors()) unused.insert(name);
  if (config.tied_output) unused.erase("lm_head.weight");  // some exporters keep the tied copy

  for (const TensorSpec& spec : model_tensor_specs(config)) {
    const std::string source = hf_name(spec.name);
    const auto it = weights.tensors().find(source);
    if (it == weights.tensors().end()) {
      throw std::runtime_error(str_cat("the checkpoint has no ", source, " (for ", spec.name, ")"));
    }
    // HF shapes are [out, in]; GGUF dims are [in, out]: the same bytes.
    const std::vector<uint64_t> expected(spec.dims.rbegin(), spec.dims.rend());
    if (it->second.shape != expected) {
      throw std::runtime_error(str_cat(source, " has the wrong shape for ", spec.name));
    }
    std::vector<float> values = weights.values(source);
    const auto row_length = static_cast<int64_t>(spec.dims[0]);
    if (spec.name.ends_with("attn_q.weight")) {
      values = permute_rope_rows(values, config.n_heads, config.head_dim, row_length);
    } else if (spec.name.ends_with("attn_k.weight")) {
      values = permute_rope_rows(values, config.n_kv_heads, config.head_dim, row_length);
    }
    const WeightType tensor_type =
        spec.role == TensorRole::kMatrix ? fitting_type(type, spec.dims[0]) : WeightType::kF32;
    if (tensor_type != type && spec.role == TensorRole::kMatrix) {
      log_info("tensor ", spec.name, ": rows of ", spec.dims[0], " do not split into ",
               weight_type_name(type), " blocks; writing ", weight_type_name(tensor_type));
    }
    writer.add_tensor(spec.name, spec.dims, tensor_type, values);
    unused.erase(source);
  }
  if (!unused.empty()) {
    throw std::runtime_error(str_cat("the checkpoint holds tensors a llama model has not, first ",
                                     *unused.begin()));
  }
}

}  // namespace strata
