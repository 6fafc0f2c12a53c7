// strata bench -m MODEL.gguf: prefill and decode speed of one sequence on the
// CPU, as one JSON object, with the ceiling decode is compared to measured in
// the same run: the machine's memory read rate divided by the weight bytes a
// decode step reads.
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <random>

#include "engine/cpu/cpu_runtime.h"
#include "engine/generation/generator.h"
#include "engine/model/loaded_model.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/memory_read_rate.h"
#include "service/cli/commands.h"

namespace strata {
namespace {

struct BenchOptions {
  std::string model_path;
  int64_t prompt_tokens = 512;
  int64_t gen_tokens = 64;
  int threads = 0;
  std::string kv_type = "f16";
};

// Weight bytes one decode step reads: every matrix once, but only one row of
// the token embedding (unless it doubles as the output head).
uint64_t decode_weight_bytes(const LoadedModel& model) {
  uint64_t bytes = 0;
  for (const GgufTensorInfo& tensor : model.file().tensors()) bytes += tensor.n_bytes;
  if (!model.config().tied_output) {
    bytes -= model.file().find_tensor("token_embd.weight")->n_bytes;
  }
  return bytes;
}

std::vector<TokenId> random_prompt(int64_t n, int32_t n_vocab) {
  std::mt19937 rng(1);
  std::uniform_int_distribution<int32_t> token(0, n_vocab - 1);
  std::vector<TokenId> prompt(static_cast<size_t>(n));
  for (TokenId& id : prompt) id = token(rng);
  return prompt;
}

void bench(const BenchOptions& o) {
  std::unique_ptr<LoadedModel> model = LoadedModel::open(o.model_path);
  const ModelConfig& config = model->config();
  if (o.prompt_tokens + o.gen_tokens > config.context_length) {
    throw std::runtime_error("--prompt-tokens plus --gen-tokens exceeds the model's context length");
  }
  CpuRuntime runtime(*model, {.n_kv_blocks = KvLayout::for_model(config).blocks_for(
                                  o.prompt_tokens + o.gen_tokens),
                              .n_threads = o.threads,
                              .kv_dtype = o.kv_type == "f32" ? WeightType::kF32 : WeightType::kF16});
  Generator generator(runtime.backend(), runtime.kv_blocks(), model->tokenizer());
  GenerationRequest request{.prompt = random_prompt(o.prompt_tokens, static_cast<int32_t>(config.n_vocab)),
                            .sampling = {.temperature = 0.0f}, .max_tokens = o.gen_tokens,
                            .stop = {}, .ignore_eos = true};
  std::atomic<bool> cancel{false};
  auto discard = [](std::string_view) {};
  // A short warm-up faults the mapped weights in and sizes every buffer.
  GenerationRequest warm_up = request;
  warm_up.prompt.resize(std::min<size_t>(warm_up.prompt.size(), 32));
  warm_up.max_tokens = 2;
  generator.generate(warm_up, discard, cancel);
  GenerationResult result = generator.generate(request, discard, cancel);

  std::vector<uint8_t> read_buffer(size_t{1} << 30, 1);
  const double read_gb_per_s = measure_read_gb_per_s(read_buffer, runtime.threads());
  const uint64_t step_bytes = decode_weight_bytes(*model);
  const double prefill_tok_s = static_cast<double>(o.prompt_tokens) / result.prefill_seconds;
  const double decode_tok_s = static_cast<double>(result.n_decode_steps) / result.decode_seconds;
  const double ceiling_tok_s = read_gb_per_s * 1e9 / static_cast<double>(step_bytes);

  nlohmann::ordered_json out;
  out["bench"] = "cpu";
  out["model"] = o.model_path;
  out["arch"] = architecture_name(config.arch);
  out["threads"] = runtime.threads().n_threads();
  out["simd"] = cpu_simd_name(selected_cpu_simd());
  out["kv_type"] = o.kv_type;
  out["prompt_tokens"] = o.prompt_tokens;
  out["prefill_tok_s"] = prefill_tok_s;
  out["gen_tokens"] = result.tokens.size();
  out["decode_tok_s"] = decode_tok_s;
  out["decode_weight_bytes"] = step_bytes;
  out["read_gb_per_s"] = read_gb_per_s;
  out["decode_ceiling_tok_s"] = ceiling_tok_s;
  out["decode_ratio_to_ceiling"] = decode_tok_s / ceiling_tok_s;
  std::cout << out.dump(2) << "\n";
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand("bench", "Measure prefill and decode speed (JSON)");
  cmd->add_option("-m,--model", o->model_path, "GGUF model file")->required();
  cmd->add_option("--prompt-tokens", o->prompt_tokens, "Prompt length")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--gen-tokens", o->gen_tokens, "Tokens to decode")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("-t,--threads", o->threads, "Compute threads (default: all cores)");
  cmd->add_option("--kv-type", o->kv_type, "KV cache type: f16 or f32")
      ->capture_default_str()->check(CLI::IsMember({"f16", "f32"}));
  cmd->callback([o] { bench(*o); });
}

}  // namespace strata
