#include "engine/cuda/cuda_backend.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/check.h"
#include "engine/cpu/token_batch.h"
#include "gpu/cuda_check.h"
#include "kernels/cuda/cuda_decode_attention.h"
#include "kernels/cuda/cuda_kquant_decode.h"
#include "kernels/cuda/cuda_kv_arena.h"
#include "kernels/cuda/cuda_ops.h"

namespace strata {
namespace {

// Arena slots start on this boundary (any is correct; this keeps every
// block's K and V runs aligned for vector loads).
constexpr int64_t kSlotAlignment = 256;

CudaKvArena arena_view(const KvLayout& layout, std::byte* base) {
  return cuda_kv_arena(
      layout, base, (layout.block_bytes() + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment);
}

// Grows a cudaHostAlloc'd buffer to hold at least `bytes` (contents lost).
template <typename T>
void reserve_pinned(T*& buffer, size_t& capacity, size_t count) {
  if (count <= capacity) return;
  if (buffer != nullptr) STRATA_CUDA_CHECK(cudaFreeHost(buffer));
  buffer = nullptr;
  capacity = 0;
  STRATA_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&buffer), count * sizeof(T),
                                  cudaHostAllocDefault));
  capacity = count;
}

// The first product to read a layer's xn before attention and before the
// feed-forward: the one whose wish for staged x the norm before them follows.
const CudaWeightMatrix& first_attention_product(const CudaLayerWeights& w) {
  return w.qkv_fused() ? w.wqkv : w.wq;
}
const CudaWeightMatrix& first_feed_forward_product(const CudaLayerWeights& w) {
  return w.gate_up_fused() ? w.w_gate_up : w.w_gate;
}

void reserve_floats(DeviceBuffer& buffer, int64_t n) {
  buffer.reserve(static_cast<size_t>(n) * sizeof(float));
}

// Decode graphs are captured per power-of-two bucket of the batch's longest
// context, so that the attention's key split (sized by it) stays fixed while
// the sequences grow; rows with fewer keys skip the parts beyond their own.
int64_t context_bucket(int64_t max_seq_keys) {
  int64_t bucket = 256;
  while (bucket < max_seq_keys) bucket *= 2;
  return bucket;
}

bool is_decode_step(const TokenBatch& flat) {
  for (const TokenBatch::Sequence& s : flat.sequences) {
    if (s.n_rows != 1) return false;
  }
  return static_cast<int64_t>(flat.logit_rows.size()) == flat.n_rows();
}

}  // namespace

int64_t CudaBackend::slot_bytes(const KvLayout& layout) {
  return arena_view(layout, nullptr).slot_bytes;
}

CudaBackend::CudaBackend(const CudaModelWeights& weights, const ModelConfig& config,
                         const KvLayout& layout, const BlockPool& kv_blocks, bool use_graphs)
    : config_(config),
      layout_(layout),
      kv_blocks_(kv_blocks),
      stream_([] {
        cudaStream_t stream = nullptr;
        STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        return stream;
      }()),
      weights_(weights),
      kv_arena_(static_cast<size_t>(arena_view(layout, nullptr).slot_bytes * kv_blocks.n_total())),
      arena_view_(arena_view(layout, static_cast<std::byte*>(kv_arena_.data()))),
      matmul_(stream_),
      use_graphs_(use_graphs) {
  STRATA_CHECK(layout.n_layers == config_.n_layers && layout.n_kv_heads == config_.n_kv_heads &&
                   layout.head_dim == config_.head_dim,
               "KV layout does not match the model");
  STRATA_CHECK(kv_blocks.block_bytes() >= layout.block_bytes(), "pool blocks of ",
               kv_blocks.block_bytes(), " bytes, layout needs ", layout.block_bytes());
}

CudaBackend::~CudaBackend() {
  cudaStreamSynchronize(stream_);
  drop_graphs();
  if (meta_pinned_ != nullptr) cudaFreeHost(meta_pinned_);
  if (logits_pinned_ != nullptr) cudaFreeHost(logits_pinned_);
  if (choice_pinned_ != nullptr) cudaFreeHost(choice_pinned_);
  if (results_pinned_ != nullptr) cudaFreeHost(results_pinned_);
  cudaStreamDestroy(stream_);
}

void CudaBackend::resize_activations(int64_t n_rows, int64_t n_logit_rows) {
  const ModelConfig& c = config_;
  if (n_rows > rows_capacity_) {
    reserve_floats(act_.x, n_rows * c.n_embd);
    reserve_floats(act_.xn, n_rows * c.n_embd);
    reserve_floats(act_.qkv, n_rows * (c.n_heads + 2 * c.n_kv_heads) * c.head_dim);
    reserve_floats(act_.q, n_rows * c.n_heads * c.head_dim);
    reserve_floats(act_.k, n_rows * c.n_kv_heads * c.head_dim);
    reserve_floats(act_.v, n_rows * c.n_kv_heads * c.head_dim);
    reserve_floats(act_.attn, n_rows * c.n_heads * c.head_dim);
    reserve_floats(act_.proj, n_rows * c.n_embd);
    reserve_floats(act_.gate_up, n_rows * 2 * c.n_ffn);
    reserve_floats(act_.gate, n_rows * c.n_ffn);
    reserve_floats(act_.up, n_rows * c.n_ffn);
    int64_t staged_row_bytes = 0;
    for (const int64_t row_length : {c.n_embd, c.n_heads * c.head_dim, c.n_ffn}) {
      if (row_length % 256 != 0) continue;  // never a Q4_K / Q6_K product's row
      staged_row_bytes = std::max(staged_row_bytes, cuda_kquant_staged_x_bytes(row_length));
    }
    act_.x_staged.reserve(
        static_cast<size_t>(std::min(n_rows, kMaxKQuantDecodeTokens) * staged_row_bytes));
    rows_capacity_ = n_rows;
    ++buffers_generation_;
  }
  if (n_logit_rows > logit_rows_capacity_) {
    reserve_floats(act_.head_in, n_logit_rows * c.n_embd);
    reserve_floats(act_.logits, n_logit_rows * c.n_vocab);
    reserve_pinned(logits_pinned_, logits_pinned_capacity_,
                   static_cast<size_t>(n_logit_rows * c.n_vocab));
    logit_rows_capacity_ = n_logit_rows;
    ++buffers_generation_;
  }
}

// Packs the step's int32 arrays into one buffer and copies it up in one go.
// The arrays sized by the batch come first and the block tables last, so
// that every array but the last sits at an offset fixed by the batch's shape
// (what a captured decode graph needs):
//   tokens, positions [n_rows] | logit_rows | seq_block_start, seq_first_row
//   [n_seqs + 1] | seq_n_past [n_seqs] | row_seq [n_rows] | block_ids
void CudaBackend::upload_step(const TokenBatch& flat) {
  std::vector<int32_t>& m = meta_host_;
  m.clear();
  auto mark = [&] { return m.size(); };
  auto narrow = [](int64_t v) { return static_cast<int32_t>(v); };
  const size_t tokens_at = mark();
  m.insert(m.end(), flat.tokens.begin(), flat.tokens.end());
  const size_t positions_at = mark();
  for (int64_t p : flat.positions) m.push_back(narrow(p));
  const size_t logit_rows_at = mark();
  for (int64_t r : flat.logit_rows) m.push_back(narrow(r));
  const size_t seq_block_start_at = mark();
  int64_t n_blocks = 0;
  m.push_back(0);
  for (const TokenBatch::Sequence& s : flat.sequences) {
    n_blocks += static_cast<int64_t>(s.blocks.size());
    m.push_back(narrow(n_blocks));
  }
  const size_t seq_first_row_at = mark();
  for (const TokenBatch::Sequence& s : flat.sequences) m.push_back(narrow(s.first_row));
  m.push_back(narrow(flat.n_rows()));
  const size_t seq_n_past_at = mark();
  int64_t max_seq_rows = 0;
  int64_t max_seq_keys = 0;
  for (const TokenBatch::Sequence& s : flat.sequences) {
    m.push_back(narrow(s.n_past));
    max_seq_rows = std::max(max_seq_rows, s.n_rows);
    max_seq_keys = std::max(max_seq_keys, s.n_past + s.n_rows);
  }
  const size_t row_seq_at = mark();
  for (size_t s = 0; s < flat.sequences.size(); ++s) {
    m.insert(m.end(), static_cast<size_t>(flat.sequences[s].n_rows), static_cast<int32_t>(s));
  }
  const size_t block_ids_at = mark();
  for (const TokenBatch::Sequence& s : flat.sequences) {
    m.insert(m.end(), s.blocks.begin(), s.blocks.end());
  }

  const size_t bytes = m.size() * sizeof(int32_t);
  reserve_pinned(meta_pinned_, meta_pinned_capacity_, m.size());
  std::memcpy(meta_pinned_, m.data(), bytes);
  if (bytes > meta_device_.bytes()) {
    // Doubling: block tables grow every 16 tokens, graphs should not drop as often.
    meta_device_.reserve(std::max(bytes, 2 * meta_device_.bytes()));
    ++buffers_generation_;
  }
  STRATA_CUDA_CHECK(
      cudaMemcpyAsync(meta_device_.data(), meta_pinned_, bytes, cudaMemcpyHostToDevice, stream_));
  const int32_t* d = meta_device_.as<int32_t>();
  meta_ = MetaViews{.tokens = d + tokens_at, .positions = d + positions_at,
                    .logit_rows = d + logit_rows_at};
  attention_batch_ = CudaAttentionBatch{.block_ids = d + block_ids_at,
                                        .seq_block_start = d + seq_block_start_at,
                                        .seq_first_row = d + seq_first_row_at,
                                        .seq_n_past = d + seq_n_past_at,
                                        .row_seq = d + row_seq_at,
                                        .n_seqs = static_cast<int64_t>(flat.sequences.size()),
                                        .n_rows = flat.n_rows(),
                                        .max_seq_rows = max_seq_rows,
                                        .max_seq_keys = max_seq_keys};
}

void CudaBackend::forward(std::span<const BatchSequence> batch, std::vector<float>& logits) {
  const int64_t n_logit_rows = enqueue_step(batch);
  const size_t n_logits = static_cast<size_t>(n_logit_rows * config_.n_vocab);
  logits.resize(n_logits);
  if (n_logits == 0) return;
  STRATA_CUDA_CHECK(cudaMemcpyAsync(logits_pinned_, act_.logits.data(), n_logits * sizeof(float),
                                    cudaMemcpyDeviceToHost, stream_));
  STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::memcpy(logits.data(), logits_pinned_, n_logits * sizeof(float));
}

void CudaBackend::forward_and_choose(std::span<const BatchSequence> batch,
                                     std::span<const TokenChoice> choices,
                                     std::vector<SampledToken>& chosen) {
  for (const TokenChoice& choice : choices) {
    STRATA_CHECK(choice.batch_index < batch.size() && !batch[choice.batch_index].all_logits,
                 "a token choice for batch entry ", choice.batch_index);
  }
  for (const BatchSequence& seq : batch) {
    STRATA_CHECK(!seq.all_logits, "token choice with every row's logits");
  }
  chosen.clear();
  if (enqueue_step(batch) == 0) return;
  if (!choices.empty()) enqueue_choices(choices);
  // Also without choices: the next step's upload reuses the pinned staging.
  STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (choices.empty()) return;
  for (size_t i = 0; i < choices.size(); ++i) {
    const CudaTokenChoice& r = results_pinned_[i];
    STRATA_CHECK(r.status != CudaChoiceStatus::kNanLogit, "NaN logit");
    STRATA_CHECK(r.status == CudaChoiceStatus::kOk, "no finite logit");
    SampledToken& token = chosen.emplace_back();
    token.id = r.id;
    if (!choices[i].with_logprobs) continue;
    token.logprob = r.logprob;
    for (int32_t k = 0; k < r.n_top; ++k) {
      token.top.push_back({.id = r.top_ids[k], .logprob = r.top_logprobs[k]});
    }
  }
}

// One logits row per sequence (all_logits is false where tokens are chosen),
// so choice i reads row batch_index.
void CudaBackend::enqueue_choices(std::span<const TokenChoice> choices) {
  size_t n_penalties = 0;
  for (const TokenChoice& choice : choices) n_penalties += choice.penalties.size();
  const size_t params_bytes = choices.size() * sizeof(CudaChoiceParams);
  const size_t bytes = params_bytes + n_penalties * sizeof(CudaPenaltyToken);
  reserve_pinned(choice_pinned_, choice_pinned_capacity_, bytes);
  auto* params = reinterpret_cast<CudaChoiceParams*>(choice_pinned_);
  auto* penalties = reinterpret_cast<CudaPenaltyToken*>(choice_pinned_ + params_bytes);
  int32_t n_staged = 0;
  for (size_t i = 0; i < choices.size(); ++i) {
    const TokenChoice& choice = choices[i];
    const SamplingParams& sp = choice.params;
    params[i] = CudaChoiceParams{
        .row = static_cast<int32_t>(choice.batch_index),
        .sampling = sp,
        .penalties_begin = n_staged,
        .n_penalties = static_cast<int32_t>(choice.penalties.size()),
        .n_logprobs = choice.with_logprobs ? sp.n_logprobs : -1,
        .uniform = choice.uniform};
    for (const PenaltyCount& p : choice.penalties) {
      penalties[n_staged++] = CudaPenaltyToken{
          .id = p.id, .repeated = p.repeated ? 1 : 0, .n_generated = p.n_generated};
    }
  }
  choice_device_.reserve(bytes);
  STRATA_CUDA_CHECK(cudaMemcpyAsync(choice_device_.data(), choice_pinned_, bytes,
                                    cudaMemcpyHostToDevice, stream_));
  auto* device_bytes = static_cast<std::byte*>(choice_device_.data());
  results_device_.reserve(choices.size() * sizeof(CudaTokenChoice));
  cuda_choose_tokens(act_.logits.as<float>(), config_.n_vocab,
                     reinterpret_cast<const CudaChoiceParams*>(device_bytes),
                     static_cast<int64_t>(choices.size()),
                     reinterpret_cast<CudaPenaltyToken*>(device_bytes + params_bytes),
                     results_device_.as<CudaTokenChoice>(), stream_);
  reserve_pinned(results_pinned_, results_pinned_capacity_, choices.size());
  STRATA_CUDA_CHECK(cudaMemcpyAsync(results_pinned_, results_device_.data(),
                                    choices.size() * sizeof(CudaTokenChoice),
                                    cudaMemcpyDeviceToHost, stream_));
}

int64_t CudaBackend::enqueue_step(std::span<const BatchSequence> batch) {
  const ModelConfig& c = config_;
  const TokenBatch flat = flatten_batch(batch, c.n_vocab, layout_, kv_blocks_);
  const int64_t n_rows = flat.n_rows();
  const int64_t n_logit_rows = static_cast<int64_t>(flat.logit_rows.size());
  if (n_rows == 0) return 0;
  STRATA_CHECK(flat.positions.back() < (int64_t{1} << 30), "position beyond the int32 kernels");
  resize_activations(n_rows, n_logit_rows);
  upload_step(flat);
  if (decode_attention_scratch_.reserve(attention_batch_.n_seqs, c.n_heads, c.n_kv_heads,
                                        c.head_dim, stream_)) {
    ++buffers_generation_;
  }

  const bool decode = is_decode_step(flat);
  if (decode) {
    // Graph or not, a decode step splits its keys by the bucket, so both
    // ways give the same numbers.
    attention_batch_.max_seq_keys = context_bucket(attention_batch_.max_seq_keys);
  }
  if (use_graphs_ && decode && n_rows <= CudaMatmul::kMaxVectorTokens) {
    launch_decode_graph(n_rows);
  } else {
    enqueue_forward(n_rows, n_logit_rows);
  }
  return n_logit_rows;
}

void CudaBackend::enqueue_forward(int64_t n_rows, int64_t n_logit_rows) {
  const ModelConfig& c = config_;
  cuda_gather_rows(weights_.token_embd(), meta_.tokens, n_rows, act_.x.as<float>(), stream_);
  const CudaLayerWeights& first = weights_.layers()[0];
  cuda_rms_norm(act_.x.as<float>(), first.attn_norm.as<float>(), c.rms_norm_eps, n_rows, c.n_embd,
                act_.xn.as<float>(), stream_, nullptr,
                staging_for(first_attention_product(first), n_rows));
  for (int64_t layer = 0; layer < c.n_layers; ++layer) run_layer(layer, n_rows);

  // The LM head, only for the rows whose logits are wanted.
  cuda_rms_norm(act_.x.as<float>(), weights_.output_norm(), c.rms_norm_eps, n_logit_rows,
                c.n_embd, act_.head_in.as<float>(), stream_, meta_.logit_rows);
  matmul_.run(weights_.output(), act_.head_in.as<float>(), n_logit_rows, act_.logits.as<float>());
}

void CudaBackend::launch_decode_graph(int64_t n_rows) {
  // Reserved before capture: a graph must not allocate.
  const size_t workspace = cuda_attention_max_workspace_bytes(n_rows, config_.n_heads,
                                                              config_.head_dim);
  if (workspace > attention_workspace_.bytes()) {
    attention_workspace_.reserve(workspace);
    ++buffers_generation_;
  }
  DecodeGraph& graph = graphs_[{n_rows, attention_batch_.max_seq_keys}];
  if (graph.exec != nullptr && graph.generation != buffers_generation_) {
    STRATA_CUDA_CHECK(cudaGraphExecDestroy(graph.exec));
    graph.exec = nullptr;
  }
  if (graph.exec == nullptr) {
    // Relaxed: the attention launcher may set a kernel attribute meanwhile.
    STRATA_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed));
    cudaGraph_t captured = nullptr;
    try {
      enqueue_forward(n_rows, n_rows);
    } catch (...) {
      cudaStreamEndCapture(stream_, &captured);
      if (captured != nullptr) cudaGraphDestroy(captured);
      throw;
    }
    STRATA_CUDA_CHECK(cudaStreamEndCapture(stream_, &captured));
    const cudaError_t status = cudaGraphInstantiate(&graph.exec, captured, 0);
    cudaGraphDestroy(captured);
    STRATA_CUDA_CHECK(status);
    graph.generation = buffers_generation_;
  }
  STRATA_CUDA_CHECK(cudaGraphLaunch(graph.exec, stream_));
}

void CudaBackend::drop_graphs() {
  for (auto& [key, graph] : graphs_) {
    if (graph.exec != nullptr) cudaGraphExecDestroy(graph.exec);
  }
  graphs_.clear();
}

void CudaBackend::run_layer(int64_t layer_index, int64_t n_rows) {
  const ModelConfig& c = config_;
  const CudaLayerWeights& w = weights_.layers()[static_cast<size_t>(layer_index)];
  float* xn = act_.xn.as<float>();

  // Attention: xn holds attn_norm(x) on entry; Q/K/V finishing writes K and V into the arena
  // (in a decode step, the attention kernel finishes them itself: one launch fewer).
  const DecodeQkvFinish finish = project_qkv(w, layer_index, n_rows);
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  if (cuda_attention_is_decode_only(arena_view_, attention_batch_, c.n_heads)) {
    cuda_finish_qkv_and_decode_attention(arena_view_, attention_batch_, layer_index, finish, scale,
                                         act_.attn.as<float>(), decode_attention_scratch_,
                                         stream_);
  } else {
    cuda_finish_qkv(finish.in, finish.finish, finish.q, finish.k, finish.v, stream_);
    cuda_attention(arena_view_, attention_batch_, layer_index, c.n_heads, scale, finish.q,
                   act_.attn.as<float>(), attention_workspace_, decode_attention_scratch_,
                   stream_);
  }
  const float* attn = act_.attn.as<float>();
  matmul_.run(w.wo, attn, n_rows, act_.proj.as<float>(), stage_for(w.wo, attn, n_rows));
  cuda_add_rms_norm(act_.x.as<float>(), act_.proj.as<float>(), w.ffn_norm.as<float>(),
                    c.rms_norm_eps, n_rows, c.n_embd, xn, stream_,
                    staging_for(first_feed_forward_product(w), n_rows));

  // SwiGLU feed-forward.
  gate_and_up(w, n_rows);
  const float* gate = act_.gate.as<float>();
  matmul_.run(w.w_down, gate, n_rows, act_.proj.as<float>(), stage_for(w.w_down, gate, n_rows));
  const bool last = layer_index + 1 == c.n_layers;
  // After the last layer xn is unused: the LM head norms only the rows it needs.
  if (last) {
    cuda_add_rms_norm(act_.x.as<float>(), act_.proj.as<float>(), nullptr, c.rms_norm_eps, n_rows,
                      c.n_embd, xn, stream_);
    return;
  }
  const CudaLayerWeights& next = weights_.layers()[static_cast<size_t>(layer_index + 1)];
  cuda_add_rms_norm(act_.x.as<float>(), act_.proj.as<float>(), next.attn_norm.as<float>(),
                    c.rms_norm_eps, n_rows, c.n_embd, xn, stream_,
                    staging_for(first_attention_product(next), n_rows));
}

DecodeQkvFinish CudaBackend::project_qkv(const CudaLayerWeights& w, int64_t layer_index,
                                         int64_t n_rows) {
  const ModelConfig& c = config_;
  const float* xn = act_.xn.as<float>();
  const int64_t q_dim = c.n_heads * c.head_dim;
  const int64_t kv_dim = c.n_kv_heads * c.head_dim;
  const uint8_t* staged = staging_for(first_attention_product(w), n_rows);
  QkvInput in;
  if (w.qkv_fused()) {
    float* qkv = act_.qkv.as<float>();
    matmul_.run(w.wqkv, xn, n_rows, qkv, staged);
    const int64_t width = q_dim + 2 * kv_dim;
    in = {.q = qkv, .k = qkv + q_dim, .v = qkv + q_dim + kv_dim,
          .q_stride = width, .k_stride = width, .v_stride = width};
  } else {
    matmul_.run(w.wq, xn, n_rows, act_.q.as<float>(), staged);
    matmul_.run(w.wk, xn, n_rows, act_.k.as<float>(), staged);
    matmul_.run(w.wv, xn, n_rows, act_.v.as<float>(), staged);
    in = {.q = act_.q.as<float>(), .k = act_.k.as<float>(), .v = act_.v.as<float>(),
          .q_stride = q_dim, .k_stride = kv_dim, .v_stride = kv_dim};
  }
  return {.in = in,
          .finish = {.n_rows = n_rows,
                     .n_heads = c.n_heads,
                     .n_kv_heads = c.n_kv_heads,
                     .head_dim = c.head_dim,
                     .bq = w.bq.as<float>(),
                     .bk = w.bk.as<float>(),
                     .bv = w.bv.as<float>(),
                     .q_norm = w.q_norm.as<float>(),
                     .k_norm = w.k_norm.as<float>(),
                     .eps = c.rms_norm_eps,
                     .positions = meta_.positions,
                     .inv_freqs = weights_.rope_inv_freqs(),
                     .style = c.rope_ordering == RopeOrdering::kNormal ? RopeStyle::kNormal
                                                                       : RopeStyle::kNeox,
                     .kv_out = cuda_kv_slots(arena_view_, attention_batch_, layer_index)},
          .q = act_.q.as<float>(),
          .k = act_.k.as<float>(),
          .v = act_.v.as<float>()};
}

void CudaBackend::gate_and_up(const CudaLayerWeights& w, int64_t n_rows) {
  const int64_t n_ffn = config_.n_ffn;
  const float* xn = act_.xn.as<float>();
  float* gate = act_.gate.as<float>();
  const uint8_t* staged = staging_for(first_feed_forward_product(w), n_rows);
  if (w.gate_up_fused() && matmul_.fuses_swiglu(w.w_gate_up, n_rows)) {
    matmul_.run_swiglu(w.w_gate_up, xn, n_rows, gate, staged);
  } else if (w.gate_up_fused()) {
    const float* gate_up = act_.gate_up.as<float>();
    matmul_.run(w.w_gate_up, xn, n_rows, act_.gate_up.as<float>(), staged);
    cuda_silu_mul(gate_up, gate_up + n_ffn, 2 * n_ffn, n_rows, n_ffn, gate, stream_);
  } else {
    matmul_.run(w.w_gate, xn, n_rows, gate, staged);
    matmul_.run(w.w_up, xn, n_rows, act_.up.as<float>(), staged);
    cuda_silu_mul(gate, act_.up.as<float>(), n_ffn, n_rows, n_ffn, gate, stream_);
  }
}

uint8_t* CudaBackend::staging_for(const CudaWeightMatrix& w, int64_t n_rows) const {
  if (!cuda_kquant_decode_wants_staged_x(w, n_rows) ||
      n_rows * cuda_kquant_staged_x_bytes(w.row_length()) >
          static_cast<int64_t>(act_.x_staged.bytes())) {
    return nullptr;
  }
  return act_.x_staged.as<uint8_t>();
}

const uint8_t* CudaBackend::stage_for(const CudaWeightMatrix& w, const float* x, int64_t n_rows) {
  uint8_t* staged = staging_for(w, n_rows);
  if (staged != nullptr) cuda_kquant_stage_x(x, n_rows, w.row_length(), staged, stream_);
  return staged;
}

}  // namespace strata
