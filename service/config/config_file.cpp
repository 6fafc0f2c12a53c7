#include "service/config/config_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "common/str_cat.h"
#include "service/config/config_error.h"

namespace strata {
namespace {

std::string_view trim(std::string_view s) {
  constexpr std::string_view kBlank = " \t\r\n\f\v";
  size_t first = s.find_first_not_of(kBlank);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kBlank) - first + 1);
}

// The value without one pair of surrounding quotes; nullopt when a quote opens but
// does not close.
std::optional<std::string_view> unquote(std::string_view value) {
  if (value.empty() || (value.front() != '"' && value.front() != '\'')) return value;
  if (value.size() < 2 || value.back() != value.front()) return std::nullopt;
  return value.substr(1, value.size() - 2);
}

}  // namespace

std::string normalize_config_key(std::string_view key) {
  std::string out(key);
  for (char& c : out) {
    if (c == '_') c = '-';
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::vector<ConfigLine> parse_config_text(std::string_view text, const std::string& path) {
  constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";  // some editors on Windows add it
  if (text.starts_with(kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());

  std::vector<ConfigLine> lines;
  std::map<std::string, int> line_of_key;
  int line_number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view raw = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_number;

    std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    const std::string where = str_cat(path, ":", line_number, ": ");
    size_t equals = line.find('=');
    std::string_view key = equals == std::string_view::npos ? "" : trim(line.substr(0, equals));
    if (key.empty()) throw ConfigError(str_cat(where, "expected 'key = value', got '", line, "'"));
    std::optional<std::string_view> value = unquote(trim(line.substr(equals + 1)));
    if (!value) throw ConfigError(str_cat(where, "the value of '", key, "' has no closing quote"));

    ConfigLine parsed{
        .key = normalize_config_key(key), .value = std::string(*value), .line_number = line_number};
    auto [first, inserted] = line_of_key.emplace(parsed.key, line_number);
    if (!inserted) {
      throw ConfigError(
          str_cat(where, "'", parsed.key, "' is already set on line ", first->second));
    }
    lines.push_back(std::move(parsed));
  }
  return lines;
}

std::optional<std::string> read_text_file(const std::string& path) {
  auto fail = [&path](int error) {
    return ConfigError(str_cat("cannot read '", path, "': ", std::strerror(error)));
  };
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) {
    if (errno == ENOENT) return std::nullopt;
    throw fail(errno);
  }
  std::string text;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, file.get())) {
    text.append(buffer, n);
    if (text.size() > kMaxSettingsFileBytes) {
      throw ConfigError(
          str_cat("cannot read '", path, "': larger than ", kMaxSettingsFileBytes,
                  " bytes, which is too big for a settings file; is it the right file?"));
    }
  }
  if (std::ferror(file.get())) throw fail(errno);  // EISDIR for a directory
  return text;
}

}  // namespace strata
