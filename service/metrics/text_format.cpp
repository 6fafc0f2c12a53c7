#include "service/metrics/text_format.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>

namespace strata::metrics {
namespace {

std::string_view type_name(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// HELP text escapes backslash and newline only; a quote is literal there.
void append_help_text(std::string& out, std::string_view help) {
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

}  // namespace

void write_family_header(std::string& out, std::string_view name, std::string_view help,
                         MetricType type) {
  out += "# HELP ";
  out += name;
  out += ' ';
  append_help_text(out, help);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type_name(type);
  out += '\n';
}

void write_sample(std::string& out, std::string_view name, std::initializer_list<Label> labels,
                  double value) {
  out += name;
  if (labels.size() > 0) {
    out += '{';
    bool first = true;
    for (const Label& label : labels) {
      if (!first) out += ',';
      first = false;
      out += label.name;
      out += "=\"";
      out += escape_label_value(label.value);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  out += format_value(value);
  out += '\n';
}

std::string escape_label_value(std::string_view value) {
  std::string escaped;
  escaped.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      escaped += "\\\\";
    } else if (c == '"') {
      escaped += "\\\"";
    } else if (c == '\n') {
      escaped += "\\n";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  std::array<char, 32> buffer{};  // holds any int64 and any double's shortest form
  char* end = nullptr;
  // Whole numbers (counts) as integers: the shortest double form would print ten million
  // as "1e+07". Below 2^53 every integer is exact.
  if (constexpr double kExactIntegers = 9007199254740992.0;
      std::trunc(value) == value && std::fabs(value) < kExactIntegers) {
    end = std::to_chars(buffer.data(), buffer.data() + buffer.size(), static_cast<int64_t>(value))
              .ptr;
  } else {
    // Shortest form that reads back as the same double: bounds print as written ("0.005").
    end = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value).ptr;
  }
  return std::string(buffer.data(), end);
}

}  // namespace strata::metrics
