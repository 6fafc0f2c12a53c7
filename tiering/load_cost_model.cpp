#include "tiering/load_cost_model.h"

namespace strata {

LoadCostModel::LoadCostModel(const LoadCostOptions& options) : options_(options) {}

void LoadCostModel::observe_load(int64_t bytes, double seconds) {
  if (bytes > 0 && seconds > 0) disk_.add(static_cast<double>(bytes), seconds);
}

void LoadCostModel::observe_prefill(int64_t tokens, double seconds) {
  if (tokens >= options_.min_prefill_tokens && seconds > 0) {
    prefill_.add(static_cast<double>(tokens), seconds);
  }
}

double LoadCostModel::disk_read_bytes_per_s() const {
  return disk_.seconds > 0 ? disk_.amount / disk_.seconds : options_.disk_read_bytes_per_s;
}

std::optional<double> LoadCostModel::prefill_tokens_per_s() const {
  if (prefill_.seconds <= 0) return std::nullopt;
  return prefill_.amount / prefill_.seconds;
}

double LoadCostModel::load_seconds(int64_t bytes) const {
  return options_.load_latency_s + static_cast<double>(bytes) / disk_read_bytes_per_s();
}

std::optional<double> LoadCostModel::recompute_seconds(int64_t tokens) const {
  const std::optional<double> rate = prefill_tokens_per_s();
  if (!rate) return std::nullopt;
  return static_cast<double>(tokens) / *rate;
}

bool LoadCostModel::load_wins(int64_t bytes, int64_t tokens) const {
  const std::optional<double> recompute = recompute_seconds(tokens);
  return !recompute || load_seconds(bytes) < *recompute;
}

}  // namespace strata
