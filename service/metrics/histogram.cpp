#include "service/metrics/histogram.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/check.h"
#include "service/metrics/text_format.h"

namespace strata::metrics {

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)), bucket_counts_(upper_bounds_.size() + 1) {
  for (size_t i = 0; i < upper_bounds_.size(); ++i) {
    STRATA_CHECK(std::isfinite(upper_bounds_[i]), "histogram bound ", i, " is not finite");
    STRATA_CHECK(i == 0 || upper_bounds_[i - 1] < upper_bounds_[i],
                 "histogram bounds must be strictly increasing, at ", i);
  }
}

void Histogram::observe(double value) {
  if (std::isnan(value)) return;
  auto bucket = std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value);
  bucket_counts_[static_cast<size_t>(bucket - upper_bounds_.begin())].fetch_add(
      1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

void Histogram::render(std::string& out, std::string_view name, std::string_view help) const {
  write_family_header(out, name, help, MetricType::kHistogram);
  const std::string bucket_name = std::string(name) + "_bucket";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bucket_counts_.size(); ++i) {
    cumulative += bucket_counts_[i].load(std::memory_order_relaxed);
    const bool is_inf = i == upper_bounds_.size();
    const std::string le = is_inf ? "+Inf" : format_value(upper_bounds_[i]);
    write_sample(out, bucket_name, {{"le", le}}, static_cast<double>(cumulative));
  }
  write_sample(out, std::string(name) + "_sum", {}, sum_.load(std::memory_order_relaxed));
  write_sample(out, std::string(name) + "_count", {}, static_cast<double>(cumulative));
}

}  // namespace strata::metrics
