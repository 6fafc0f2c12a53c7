// The syntax of Strata's config file (/etc/strata/strata.conf), without knowing which
// settings exist: serve_settings.cpp gives the keys their meaning.
//
//   # a comment: a line whose first non-blank character is #
//   port = 8080
//   model = "/var/lib/strata/models/Llama 3.2 1B.gguf"
//
// A line is `key = value`, split at the first `=`; both sides are trimmed. Keys are
// case-insensitive and `_` reads as `-` (max_waiting is max-waiting), so a key looks the
// same as its flag. One pair of matching quotes ("..." or '...') around a value is
// removed and nothing inside is escaped, so values may hold #, = and spaces; # starts a
// comment only at the start of a line, for the same reason.
//
// Pure functions, except read_text_file (reads a file): any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

struct ConfigLine {
  std::string key;      // normalized (normalize_config_key)
  std::string value;    // trimmed, quotes removed; may be empty ("socket =")
  int line_number = 0;  // 1-based, for messages
};

// The `key = value` lines of `text`, in file order. Throws ConfigError
// ("path:7: expected 'key = value', got 'port 8080'") for a line that is neither blank,
// a comment nor `key = value`, for an unterminated quote, and for a key set twice (the
// second would silently win, which is rarely what the author meant).
std::vector<ConfigLine> parse_config_text(std::string_view text, const std::string& path);

// "Max_Waiting" -> "max-waiting".
std::string normalize_config_key(std::string_view key);

// Files Strata reads as settings (the config file, an API key file) are small; a bigger
// one is the wrong file (a model, /dev/zero), and is refused rather than read.
inline constexpr size_t kMaxSettingsFileBytes = 1 << 20;

// The whole file, or nullopt when it does not exist. Throws ConfigError
// ("cannot read '/etc/strata/strata.conf': Permission denied") for any other failure,
// and for a file over kMaxSettingsFileBytes.
std::optional<std::string> read_text_file(const std::string& path);

}  // namespace strata
