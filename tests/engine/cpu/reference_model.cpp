#include "reference_model.h"

#include <cmath>

#include "common/check.h"
#include "common/str_cat.h"
#include "kernels/cpu/quantize.h"

namespace strata::testing {
namespace {

using Vec = std::vector<double>;

Vec mat_vec(const std::vector<Vec>& w, const Vec& x) {
  Vec y(w.size(), 0.0);
  for (size_t r = 0; r < w.size(); ++r) {
    for (size_t c = 0; c < x.size(); ++c) y[r] += w[r][c] * x[c];
  }
  return y;
}

// HF's RMSNorm on x[begin, begin + weight.size()).
void rms_norm_range(Vec& x, size_t begin, const Vec& weight, double eps) {
  double ms = 0;
  for (size_t i = 0; i < weight.size(); ++i) ms += x[begin + i] * x[begin + i];
  ms /= static_cast<double>(weight.size());
  for (size_t i = 0; i < weight.size(); ++i) {
    x[begin + i] = x[begin + i] / std::sqrt(ms + eps) * weight[i];
  }
}

// Undoes llama.cpp's convert_hf_to_gguf.py permute() of attn_q / attn_k:
// within each head, GGUF row 2i + j is Hugging Face row j * head_dim/2 + i.
std::vector<Vec> unpermute_heads(const std::vector<Vec>& gguf, size_t head_dim) {
  std::vector<Vec> hf(gguf.size());
  const size_t half = head_dim / 2;
  for (size_t head = 0; head < gguf.size() / head_dim; ++head) {
    for (size_t i = 0; i < half; ++i) {
      for (size_t j = 0; j < 2; ++j) {
        hf[head * head_dim + j * half + i] = gguf[head * head_dim + 2 * i + j];
      }
    }
  }
  return hf;
}

}  // namespace

ReferenceModel::Matrix ReferenceModel::matrix(const GgufFile& file, const std::string& name) const {
  const GgufTensorInfo* info = file.find_tensor(name);
  STRATA_CHECK(info != nullptr, name);
  std::vector<float> flat(info->n_elems);
  dequantize(info->type, info->data, flat);
  const size_t cols = info->dims[0], rows = info->dims[1];
  Matrix m(rows, Vec(cols));
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) m[r][c] = flat[r * cols + c];
  }
  return m;
}

Vec ReferenceModel::vector(const GgufFile& file, const std::string& name) const {
  const GgufTensorInfo* info = file.find_tensor(name);
  if (info == nullptr) return {};
  std::vector<float> flat(info->n_elems);
  dequantize(info->type, info->data, flat);
  return Vec(flat.begin(), flat.end());
}

ReferenceModel::ReferenceModel(const GgufFile& file, LlamaQkOrder llama_order)
    : config_(read_model_config(file)) {
  const bool hf_llama = config_.arch == Architecture::kLlama && llama_order == LlamaQkOrder::kHf;
  neox_ = config_.arch != Architecture::kLlama || hf_llama;
  embd_ = matrix(file, "token_embd.weight");
  output_ = file.find_tensor("output.weight") ? matrix(file, "output.weight") : embd_;
  output_norm_ = vector(file, "output_norm.weight");
  rope_factors_ = vector(file, "rope_freqs.weight");
  for (int64_t i = 0; i < config_.n_layers; ++i) {
    const std::string p = str_cat("blk.", i, ".");
    Layer l;
    l.attn_norm = vector(file, p + "attn_norm.weight");
    l.wq = matrix(file, p + "attn_q.weight");
    l.wk = matrix(file, p + "attn_k.weight");
    if (hf_llama) {
      l.wq = unpermute_heads(l.wq, static_cast<size_t>(config_.head_dim));
      l.wk = unpermute_heads(l.wk, static_cast<size_t>(config_.head_dim));
    }
    l.wv = matrix(file, p + "attn_v.weight");
    l.bq = vector(file, p + "attn_q.bias");
    l.bk = vector(file, p + "attn_k.bias");
    l.bv = vector(file, p + "attn_v.bias");
    l.q_norm = vector(file, p + "attn_q_norm.weight");
    l.k_norm = vector(file, p + "attn_k_norm.weight");
    l.wo = matrix(file, p + "attn_output.weight");
    l.ffn_norm = vector(file, p + "ffn_norm.weight");
    l.w_gate = matrix(file, p + "ffn_gate.weight");
    l.w_up = matrix(file, p + "ffn_up.weight");
    l.w_down = matrix(file, p + "ffn_down.weight");
    layers_.push_back(std::move(l));
  }
}

std::vector<std::vector<double>> ReferenceModel::forward(std::span<const int32_t> tokens) const {
  const ModelConfig& c = config_;
  const size_t n = tokens.size();
  const size_t d = static_cast<size_t>(c.head_dim);
  const size_t half = d / 2;
  const double eps = c.rms_norm_eps;
  const bool neox = neox_;

  // Rotates every head of x at position pos.
  auto rotate = [&](Vec& x, size_t pos) {
    for (size_t h = 0; h < x.size() / d; ++h) {
      double* head = x.data() + h * d;
      if (neox) {
        // HF: x * cos + rotate_half(x) * sin, cos/sin repeated over both halves.
        Vec rotated(d);
        for (size_t i = 0; i < d; ++i) {
          const size_t pair = i % half;
          double inv_freq = std::pow(static_cast<double>(c.rope_freq_base),
                                     -2.0 * static_cast<double>(pair) / static_cast<double>(d));
          if (!rope_factors_.empty()) inv_freq /= rope_factors_[pair];
          const double angle = static_cast<double>(pos) * inv_freq;
          const double rotate_half = i < half ? -head[i + half] : head[i - half];
          rotated[i] = head[i] * std::cos(angle) + rotate_half * std::sin(angle);
        }
        std::copy(rotated.begin(), rotated.end(), head);
      } else {
        for (size_t i = 0; i < half; ++i) {
          double inv_freq = std::pow(static_cast<double>(c.rope_freq_base),
                                     -2.0 * static_cast<double>(i) / static_cast<double>(d));
          if (!rope_factors_.empty()) inv_freq /= rope_factors_[i];
          const double angle = static_cast<double>(pos) * inv_freq;
          const double a = head[2 * i], b = head[2 * i + 1];
          head[2 * i] = a * std::cos(angle) - b * std::sin(angle);
          head[2 * i + 1] = a * std::sin(angle) + b * std::cos(angle);
        }
      }
    }
  };

  std::vector<Vec> x(n);
  for (size_t t = 0; t < n; ++t) x[t] = embd_[static_cast<size_t>(tokens[t])];

  for (const Layer& l : layers_) {
    std::vector<Vec> q(n), k(n), v(n);
    for (size_t t = 0; t < n; ++t) {
      Vec h = x[t];
      rms_norm_range(h, 0, l.attn_norm, eps);
      q[t] = mat_vec(l.wq, h);
      k[t] = mat_vec(l.wk, h);
      v[t] = mat_vec(l.wv, h);
      for (size_t i = 0; i < l.bq.size(); ++i) q[t][i] += l.bq[i];
      for (size_t i = 0; i < l.bk.size(); ++i) k[t][i] += l.bk[i];
      for (size_t i = 0; i < l.bv.size(); ++i) v[t][i] += l.bv[i];
      if (!l.q_norm.empty()) {
        for (size_t b = 0; b < q[t].size(); b += d) rms_norm_range(q[t], b, l.q_norm, eps);
        for (size_t b = 0; b < k[t].size(); b += d) rms_norm_range(k[t], b, l.k_norm, eps);
      }
      rotate(q[t], t);
      rotate(k[t], t);
    }
    const size_t group = static_cast<size_t>(c.n_heads / c.n_kv_heads);
    for (size_t t = 0; t < n; ++t) {
      Vec attn(static_cast<size_t>(c.n_heads) * d, 0.0);
      for (size_t h = 0; h < static_cast<size_t>(c.n_heads); ++h) {
        const size_t kvh = h / group;
        Vec p(t + 1);
        double max = -1e300;
        for (size_t j = 0; j <= t; ++j) {
          double dot = 0;
          for (size_t i = 0; i < d; ++i) dot += q[t][h * d + i] * k[j][kvh * d + i];
          p[j] = dot / std::sqrt(static_cast<double>(d));
          max = std::max(max, p[j]);
        }
        double sum = 0;
        for (double& s : p) sum += (s = std::exp(s - max));
        for (size_t j = 0; j <= t; ++j) {
          for (size_t i = 0; i < d; ++i) attn[h * d + i] += p[j] / sum * v[j][kvh * d + i];
        }
      }
      Vec o = mat_vec(l.wo, attn);
      for (size_t i = 0; i < o.size(); ++i) x[t][i] += o[i];

      Vec h = x[t];
      rms_norm_range(h, 0, l.ffn_norm, eps);
      Vec g = mat_vec(l.w_gate, h), u = mat_vec(l.w_up, h);
      for (size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
      Vec down = mat_vec(l.w_down, g);
      for (size_t i = 0; i < down.size(); ++i) x[t][i] += down[i];
    }
  }

  std::vector<Vec> logits(n);
  for (size_t t = 0; t < n; ++t) {
    Vec h = x[t];
    rms_norm_range(h, 0, output_norm_, eps);
    logits[t] = mat_vec(output_, h);
  }
  return logits;
}

}  // namespace strata::testing
