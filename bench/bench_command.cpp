#include "bench/bench_command.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <random>

#include "bench/concurrency_bench.h"
#include "bench/gpu_ceilings.h"
#include "bench/memory_read_rate.h"
#include "bench/tiers_bench.h"
#include "engine/completion.h"
#include "engine/cpu/cpu_runtime.h"
#include "engine/engine.h"
#include "engine/kv_sizing.h"
#include "engine/model_engine.h"
#include "engine/model_runtime.h"
#include "kernels/cpu/cpu_features.h"
#include "model/loaded_model.h"

namespace strata {
namespace {

struct BenchOptions {
  std::string model_path;
  int64_t prompt_tokens = 512;
  int64_t gen_tokens = 64;
  int threads = 0;
  std::string kv_type = "f16";
  std::string backend = "auto";
  int64_t max_batch_tokens = 512;  // a forward pass's tokens: the prompt's chunks, an engine step
  // Concurrency mode, when concurrency > 0.
  int64_t concurrency = 0;
  int64_t n_requests = 0;  // 0: concurrency
  int64_t shared_prefix = 0;
};

WeightType kv_dtype(const BenchOptions& o) {
  return o.kv_type == "f32" ? WeightType::kF32 : WeightType::kF16;
}

void check_fits_context(const BenchOptions& o, const ModelConfig& config) {
  if (o.prompt_tokens + o.gen_tokens > config.context_length) {
    throw std::runtime_error(
        "--prompt-tokens plus --gen-tokens exceeds the model's context length");
  }
}

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

// The single-stream decode ceiling, measured now on `threads`.
struct DecodeCeiling {
  uint64_t step_bytes = 0;   // weight bytes one decode step reads
  double read_gb_per_s = 0;  // all threads streaming a 1 GiB buffer
  double tok_s = 0;          // read_gb_per_s / step_bytes
};

DecodeCeiling measure_decode_ceiling(const LoadedModel& model, ThreadPool& threads) {
  std::vector<uint8_t> read_buffer(size_t{1} << 30, 1);
  DecodeCeiling ceiling{.step_bytes = decode_weight_bytes(model),
                        .read_gb_per_s = measure_read_gb_per_s(read_buffer, threads)};
  ceiling.tok_s = ceiling.read_gb_per_s * 1e9 / static_cast<double>(ceiling.step_bytes);
  return ceiling;
}

void put_ceiling(nlohmann::ordered_json& out, const DecodeCeiling& ceiling, double decode_tok_s) {
  out["decode_weight_bytes"] = ceiling.step_bytes;
  out["read_gb_per_s"] = ceiling.read_gb_per_s;
  out["decode_ceiling_tok_s"] = ceiling.tok_s;
  out["decode_ratio_to_ceiling"] = decode_tok_s / ceiling.tok_s;
}

// Multiply-adds of the weight matrices per token, doubled: every matrix but
// the embedding lookup (the LM head counts once, tied or not).
double matmul_flops_per_token(const LoadedModel& model) {
  const ModelConfig& c = model.config();
  const double per_layer = static_cast<double>(c.n_embd) *
                           (2.0 * c.n_heads * c.head_dim + 2.0 * c.n_kv_heads * c.head_dim +
                            3.0 * c.n_ffn);
  return 2.0 * (per_layer * static_cast<double>(c.n_layers) +
                static_cast<double>(c.n_vocab) * static_cast<double>(c.n_embd));
}

// Where the runtime is a GPU: the ceilings measured now, and the figures as
// fractions of them. Decode reads every weight once and the KV of
// `mean_context` tokens per step; a causal prefill of n tokens attends to
// n / 2 keys per token on average (QK and PV: 4 flops per key and dim).
void put_gpu_ceilings(nlohmann::ordered_json& out, const LoadedModel& model,
                      const KvLayout& layout, double decode_tok_s, double mean_context,
                      std::optional<double> prefill_tok_s, int64_t prompt_tokens) {
  const std::optional<GpuCeilings> ceilings = measure_gpu_ceilings();
  if (!ceilings) return;
  const ModelConfig& c = model.config();
  const double kv_bytes =
      mean_context * static_cast<double>(c.kv_bytes_per_token(layout.elem_bytes()));
  const double step_bytes = static_cast<double>(decode_weight_bytes(model)) + kv_bytes;
  const double decode_ceiling = ceilings->copy_gb_per_s * 1e9 / step_bytes;
  out["copy_gb_per_s"] = ceilings->copy_gb_per_s;
  out["gemm_tflops"] = ceilings->gemm_tflops;
  out["decode_bytes_per_step"] = step_bytes;
  out["decode_ceiling_tok_s"] = decode_ceiling;
  out["decode_ratio_to_ceiling"] = decode_tok_s / decode_ceiling;
  if (prefill_tok_s) {
    const double attention_flops = 4.0 * static_cast<double>(c.n_layers * c.n_heads * c.head_dim) *
                                   static_cast<double>(prompt_tokens) / 2.0;
    const double flops = *prefill_tok_s * (matmul_flops_per_token(model) + attention_flops);
    out["prefill_tflops"] = flops / 1e12;
    out["prefill_ratio_to_gemm"] = flops / 1e12 / ceilings->gemm_tflops;
  }
}

// The ceilings of whichever backend the runtime is.
void put_runtime_ceilings(nlohmann::ordered_json& out, ModelRuntime& runtime,
                          const LoadedModel& model, double decode_tok_s, double mean_context,
                          std::optional<double> prefill_tok_s, int64_t prompt_tokens) {
  if (runtime.on_gpu()) {
    put_gpu_ceilings(out, model, runtime.kv_layout(), decode_tok_s, mean_context, prefill_tok_s,
                     prompt_tokens);
    return;
  }
  ThreadPool& threads = dynamic_cast<CpuRuntime&>(runtime).threads();
  out["threads"] = threads.n_threads();
  out["simd"] = cpu_simd_name(selected_cpu_simd());
  put_ceiling(out, measure_decode_ceiling(model, threads), decode_tok_s);
}

std::vector<TokenId> random_prompt(int64_t n, int32_t n_vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> token(0, n_vocab - 1);
  std::vector<TokenId> prompt(static_cast<size_t>(n));
  for (TokenId& id : prompt) id = token(rng);
  return prompt;
}

void bench(const BenchOptions& o) {
  std::unique_ptr<LoadedModel> model = LoadedModel::open(o.model_path);
  const ModelConfig& config = model->config();
  check_fits_context(o, config);
  // One sequence: the prompt in passes of max_batch_tokens, then decode.
  ModelEngine model_engine(
      *model, {.max_running = 1, .max_batch_tokens = o.max_batch_tokens,
               .n_kv_blocks = kv_layout_for(config).blocks_for(o.prompt_tokens + o.gen_tokens),
               .kv_type = kv_dtype(o), .threads = o.threads, .backend = parse_backend(o.backend)});
  ModelRuntime& runtime = model_engine.runtime();
  const auto n_vocab = static_cast<int32_t>(config.n_vocab);
  // A warm-up faults the mapped weights in and sizes every buffer: one pass of
  // another random prompt (no block shared), so that the timed prefill
  // allocates nothing and finds nothing cached.
  run_to_completion(model_engine.engine(),
                    {.prompt = random_prompt(std::min(o.prompt_tokens, o.max_batch_tokens),
                                             n_vocab, /*seed=*/2),
                     .sampling = {.temperature = 0.0f},
                     .max_tokens = std::min<int64_t>(2, o.gen_tokens),
                     .ignore_eos = true});
  const Completion result = run_to_completion(
      model_engine.engine(), {.prompt = random_prompt(o.prompt_tokens, n_vocab, /*seed=*/1),
                              .sampling = {.temperature = 0.0f},
                              .max_tokens = o.gen_tokens,
                              .ignore_eos = true});
  if (result.finish == FinishReason::kError) throw std::runtime_error(result.error);

  const double prefill_tok_s = static_cast<double>(o.prompt_tokens) / result.first_token_seconds;
  const double decode_tok_s =
      static_cast<double>(result.tokens.size() - 1) / result.decode_seconds;

  nlohmann::ordered_json out;
  out["bench"] = runtime.on_gpu() ? "cuda" : "cpu";
  out["model"] = o.model_path;
  out["arch"] = architecture_name(config.arch);
  out["backend"] = runtime.description();
  out["kv_type"] = o.kv_type;
  out["prompt_tokens"] = o.prompt_tokens;
  out["max_batch_tokens"] = o.max_batch_tokens;
  out["prefill_tok_s"] = prefill_tok_s;
  out["gen_tokens"] = result.tokens.size();
  out["decode_tok_s"] = decode_tok_s;
  put_runtime_ceilings(out, runtime, *model, decode_tok_s,
                       static_cast<double>(o.prompt_tokens) + static_cast<double>(o.gen_tokens) / 2,
                       prefill_tok_s, o.prompt_tokens);
  std::cout << out.dump(2) << "\n";
}

nlohmann::ordered_json percentiles_json(const std::vector<double>& samples) {
  const LatencyPercentiles p = nearest_rank_percentiles(samples);
  return {{"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"max", p.max}};
}

void bench_concurrency(const BenchOptions& o) {
  std::unique_ptr<LoadedModel> model = LoadedModel::open(o.model_path);
  const ModelConfig& config = model->config();
  check_fits_context(o, config);
  if (o.shared_prefix > o.prompt_tokens) {
    throw std::runtime_error("--shared-prefix exceeds --prompt-tokens");
  }
  const ConcurrencyBenchOptions load{.concurrency = o.concurrency,
                                     .n_requests = o.n_requests > 0 ? o.n_requests : o.concurrency,
                                     .prompt_tokens = o.prompt_tokens,
                                     .gen_tokens = o.gen_tokens,
                                     .shared_prefix = o.shared_prefix};
  // KV for every in-flight sequence at full length, plus headroom: a spare
  // block per sequence, the shared prefix once more (so it can stay cached
  // while no request holds it), and ~1.5% for the admission watermark (1%).
  const KvLayout layout = kv_layout_for(config);
  const int64_t n_seq_blocks = layout.blocks_for(o.prompt_tokens + o.gen_tokens);
  const int64_t n_blocks = o.concurrency * (n_seq_blocks + 1) + layout.blocks_for(o.shared_prefix) +
                           o.concurrency * n_seq_blocks / 64;
  ModelEngine model_engine(*model, {.max_running = o.concurrency,
                                    .max_batch_tokens = o.max_batch_tokens,
                                    .n_kv_blocks = n_blocks, .kv_type = kv_dtype(o),
                                    .threads = o.threads, .backend = parse_backend(o.backend)});
  ModelRuntime& runtime = model_engine.runtime();
  Engine& engine = model_engine.engine();
  // A short warm-up faults the mapped weights in and sizes every buffer; its
  // random prompt (another seed) shares no block with the measured ones.
  run_concurrency_bench(engine, static_cast<int32_t>(config.n_vocab),
                        {.prompt_tokens = std::min<int64_t>(o.prompt_tokens, 32),
                         .gen_tokens = 2, .seed = 12345});
  const EngineStats before = engine.stats();
  const ConcurrencyBenchResult result =
      run_concurrency_bench(engine, static_cast<int32_t>(config.n_vocab), load);
  const EngineStats after = engine.stats();
  // Aggregate rates over the whole run's wall time (first submit to last
  // finish), prefill included, as a client sees them: decode_tok_s counts
  // generated tokens only, total_tok_s prompt plus generated tokens.
  const double decode_tok_s = static_cast<double>(result.n_generated_tokens) / result.wall_seconds;
  const double total_tok_s =
      static_cast<double>(result.n_prompt_tokens + result.n_generated_tokens) / result.wall_seconds;

  nlohmann::ordered_json out;
  out["bench"] = runtime.on_gpu() ? "cuda_concurrency" : "cpu_concurrency";
  out["model"] = o.model_path;
  out["arch"] = architecture_name(config.arch);
  out["backend"] = runtime.description();
  out["kv_type"] = o.kv_type;
  out["requests"] = load.n_requests;
  out["concurrency"] = load.concurrency;
  out["prompt_tokens"] = load.prompt_tokens;
  out["gen_tokens"] = load.gen_tokens;
  out["shared_prefix"] = load.shared_prefix;
  out["max_batch_tokens"] = o.max_batch_tokens;
  out["kv_blocks"] = n_blocks;
  out["generated_tokens"] = result.n_generated_tokens;
  out["wall_seconds"] = result.wall_seconds;
  out["decode_tok_s"] = decode_tok_s;
  out["total_tok_s"] = total_tok_s;
  out["decode_steady_tok_s"] = result.steady.tok_s();  // all of the first wave decoding
  out["steady_window_seconds"] = result.steady.seconds;
  out["ttft_ms"] = percentiles_json(result.ttft_ms);
  out["itl_ms"] = percentiles_json(result.itl_ms);
  out["cached_prompt_tokens"] = result.n_cached_prompt_tokens;
  out["prefix_hit_ratio"] = static_cast<double>(result.n_cached_prompt_tokens) /
                            static_cast<double>(result.n_prompt_tokens);
  // The model's share of a step: forward_ms_per_step (every step of the run,
  // prefill chunks included) and decode_forward_ms_per_step (steps that only
  // decode) against itl_ms (the gaps between a stream's tokens) show what
  // the engine around the forward passes costs.
  const auto ms_per_step = [](double seconds, int64_t steps) {
    return steps > 0 ? 1e3 * seconds / static_cast<double>(steps) : 0.0;
  };
  const int64_t n_steps = after.n_steps - before.n_steps;
  const int64_t n_decode_steps = after.n_decode_steps - before.n_decode_steps;
  out["engine"] = {
      {"steps", n_steps},
      {"decode_steps", n_decode_steps},
      {"preemptions", after.n_preemptions - before.n_preemptions},
      {"forward_ms_per_step", ms_per_step(after.forward_seconds - before.forward_seconds, n_steps)},
      {"decode_forward_ms_per_step",
       ms_per_step(after.decode_forward_seconds - before.decode_forward_seconds, n_decode_steps)}};
  // Batching can beat the single-stream ceiling: one weight read serves a
  // token of every running sequence.
  put_runtime_ceilings(out, runtime, *model, decode_tok_s,
                       static_cast<double>(o.prompt_tokens) + static_cast<double>(o.gen_tokens) / 2,
                       std::nullopt, o.prompt_tokens);
  std::cout << out.dump(2) << "\n";
}

// `strata bench tiers`: -m, -t and --kv-type fall through to `bench`'s own.
CLI::App* add_tiers_command(CLI::App& bench_cmd, const std::shared_ptr<BenchOptions>& o) {
  auto tiers = std::make_shared<TiersBenchOptions>();
  CLI::App* cmd = bench_cmd.add_subcommand(
      "tiers", "KV tier moves (VRAM <-> host <-> disk) against plain copies and O_DIRECT, and TTFT"
               " by prefix tier (JSON); takes bench's -m, -t, --kv-type and --backend");
  cmd->fallthrough();
  cmd->add_option(
      "--cache-dir", tiers->cache_dir,
      "Folder on the disk to measure (a scratch subfolder is made and removed; default: temp)");
  cmd->add_option("--blocks", tiers->n_blocks, "KV blocks moved each way (default: ~256 MiB)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--prompt-tokens", tiers->prompt_tokens, "TTFT prompt lengths, comma-separated")
      ->delimiter(',')->capture_default_str()->check(CLI::PositiveNumber);
  cmd->callback([o, tiers] {
    if (o->concurrency > 0) throw std::runtime_error("--concurrency does not apply to bench tiers");
    tiers->model_path = o->model_path;
    tiers->n_threads = o->threads;
    tiers->kv_dtype = kv_dtype(*o);
    tiers->backend = parse_backend(o->backend);
    std::cout << run_tiers_bench(*tiers).dump(2) << "\n";
  });
  return cmd;
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
  cmd->add_option("--max-batch-tokens", o->max_batch_tokens,
                  "Tokens in one forward pass: the prompt's prefill chunks (with --concurrency, "
                  "the engine step's budget, as serve's --max-batch-tokens)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--kv-type", o->kv_type, "KV cache type: f16 or f32")
      ->capture_default_str()->check(CLI::IsMember({"f16", "f32"}));
  cmd->add_option("--backend", o->backend,
                  "Where the model runs: auto (CUDA when a GPU can run it), cpu, cuda")
      ->capture_default_str()->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd->add_option("--concurrency", o->concurrency,
                  "Serve through the engine with this many requests in flight")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--requests", o->n_requests, "Requests in all (default: --concurrency)")
      ->check(CLI::PositiveNumber)->needs("--concurrency");
  cmd->add_option("--shared-prefix", o->shared_prefix,
                  "Leading prompt tokens identical across requests")
      ->check(CLI::NonNegativeNumber)->needs("--concurrency");
  CLI::App* tiers = add_tiers_command(*cmd, o);
  cmd->callback([o, tiers] {
    if (tiers->parsed()) return;  // its own callback ran
    o->concurrency > 0 ? bench_concurrency(*o) : bench(*o);
  });
}

}  // namespace strata
