#include "model/model_weights.h"

#include <map>
#include <string>

#include "common/check.h"
#include "common/str_cat.h"
#include "kernels/cpu/quantize.h"
#include "model/gguf/gguf_file.h"
#include "model/model_tensors.h"

namespace strata {
namespace {

std::string dims_text(const std::vector<uint64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += str_cat(i == 0 ? "" : ", ", dims[i]);
  return text + "]";
}

// The file's tensor for `spec`, after checking it exists, has the spec's
// dims, and has a type Strata computes with.
const GgufTensorInfo& require_tensor(const GgufFile& file, const TensorSpec& spec) {
  const GgufTensorInfo* info = file.find_tensor(spec.name);
  if (info == nullptr) {
    throw ModelError(str_cat("model lacks tensor '", spec.name, "' ", dims_text(spec.dims)));
  }
  if (info->dims != spec.dims) {
    throw ModelError(str_cat("tensor '", spec.name, "' has shape ", dims_text(info->dims),
                             ", expected ", dims_text(spec.dims)));
  }
  if (!weight_type_info(info->type).supported) {
    throw ModelError(str_cat("tensor '", spec.name, "' has type ", weight_type_name(info->type),
                             ", which Strata cannot compute with (supported: f32, f16, bf16, "
                             "q8_0, q4_0, q4_k, q5_k, q6_k)"));
  }
  return *info;
}

WeightMatrix as_matrix(const GgufTensorInfo& info) {
  return WeightMatrix{.type = info.type,
                      .data = info.data.data(),
                      .n_rows = static_cast<int64_t>(info.dims[1]),
                      .row_length = static_cast<int64_t>(info.dims[0])};
}

std::vector<float> as_f32(const GgufTensorInfo& info) {
  std::vector<float> values(info.n_elems);
  dequantize(info.type, info.data, values);
  return values;
}

}  // namespace

ModelWeights::ModelWeights(const GgufFile& file, const ModelConfig& config) : config_(config) {
  // Every layer has at least kTensorsPerLayer tensors. A block_count the file
  // cannot hold is refused before anything is sized by it: the specs of a
  // billion layers would not fit in memory.
  constexpr int64_t kTensorsPerLayer = 9;
  const auto n_tensors = static_cast<int64_t>(file.tensors().size());
  if (config.n_layers > n_tensors / kTensorsPerLayer) {
    throw ModelError(str_cat("block_count is ", config.n_layers, " but the model has only ",
                             n_tensors, " tensors (at least ", kTensorsPerLayer, " a layer)"));
  }
  // Validate every tensor before binding any, in the order llama.cpp writes
  // them, so the error names the first problem a reader of the file would see.
  std::vector<TensorSpec> specs = model_tensor_specs(config);
  if (config.has_rope_freqs) {
    specs.push_back(
        {"rope_freqs.weight", {static_cast<uint64_t>(config.head_dim / 2)}, TensorRole::kVector});
  }
  std::map<std::string, const GgufTensorInfo*, std::less<>> bound;
  for (const TensorSpec& spec : specs) bound[spec.name] = &require_tensor(file, spec);

  auto tensor = [&](const std::string& name) -> const GgufTensorInfo& {
    auto it = bound.find(name);
    STRATA_CHECK(it != bound.end(), "no spec for tensor ", name);
    return *it->second;
  };
  auto matrix = [&](const std::string& name) { return as_matrix(tensor(name)); };
  auto vector = [&](const std::string& name) { return as_f32(tensor(name)); };

  token_embd_ = matrix("token_embd.weight");
  layers_.resize(static_cast<size_t>(config.n_layers));
  for (int64_t i = 0; i < config.n_layers; ++i) {
    const std::string p = str_cat("blk.", i, ".");
    LayerWeights& layer = layers_[static_cast<size_t>(i)];
    layer.attn_norm = vector(p + "attn_norm.weight");
    layer.wq = matrix(p + "attn_q.weight");
    layer.wk = matrix(p + "attn_k.weight");
    layer.wv = matrix(p + "attn_v.weight");
    if (config.arch == Architecture::kQwen2) {
      layer.bq = vector(p + "attn_q.bias");
      layer.bk = vector(p + "attn_k.bias");
      layer.bv = vector(p + "attn_v.bias");
    }
    if (config.arch == Architecture::kQwen3) {
      layer.q_norm = vector(p + "attn_q_norm.weight");
      layer.k_norm = vector(p + "attn_k_norm.weight");
    }
    layer.wo = matrix(p + "attn_output.weight");
    layer.ffn_norm = vector(p + "ffn_norm.weight");
    layer.w_gate = matrix(p + "ffn_gate.weight");
    layer.w_up = matrix(p + "ffn_up.weight");
    layer.w_down = matrix(p + "ffn_down.weight");
  }
  output_norm_ = vector("output_norm.weight");
  if (!config.tied_output) output_ = matrix("output.weight");
  if (config.has_rope_freqs) rope_freqs_ = vector("rope_freqs.weight");
}

void ModelWeights::embed(std::span<const int32_t> tokens, std::span<float> out) const {
  const int64_t n_embd = config_.n_embd;
  STRATA_CHECK(static_cast<int64_t>(out.size()) == static_cast<int64_t>(tokens.size()) * n_embd,
               "out ", out.size(), " for ", tokens.size(), " tokens");
  const uint64_t row_bytes = weight_bytes(token_embd_.type, static_cast<uint64_t>(n_embd)).value();
  for (size_t t = 0; t < tokens.size(); ++t) {
    const int32_t token = tokens[t];
    STRATA_CHECK(token >= 0 && token < config_.n_vocab, "token ", token, " outside [0, ",
                 config_.n_vocab, ")");
    std::span<const std::byte> row(token_embd_.data + static_cast<uint64_t>(token) * row_bytes,
                                   row_bytes);
    dequantize(token_embd_.type, row,
               out.subspan(t * static_cast<size_t>(n_embd), static_cast<size_t>(n_embd)));
  }
}

}  // namespace strata
