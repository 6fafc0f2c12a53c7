// ServeSettings: everything `strata serve` can be told, from three sources, each
// overriding the one before:
//   1. the config file: /etc/strata/strata.conf, or --config / STRATA_CONFIG
//      (syntax in config_file.h; a missing file at the default path is fine);
//   2. the environment: STRATA_<KEY>, upper case, `-` as `_` (STRATA_MAX_WAITING);
//   3. command-line flags: --<key> (--max-waiting).
// All three are read through one table of settings (serve_settings.cpp), so a setting
// exists in every source or in none, with one parser and one range check.
//
// List settings (allowed-hosts, cors-origins) are comma-separated in the file and the
// environment; their flag is repeatable and takes commas too. A source that sets a list
// replaces the list of the sources before it.
//
// Resolved once at start-up on the main thread; ServeSettings is plain data, read-only
// afterwards and safe to share.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "service/config/config_error.h"
#include "service/config/environment.h"

namespace CLI {
class App;
}

namespace strata {

inline constexpr std::string_view kDefaultConfigPath = "/etc/strata/strata.conf";

struct ServeSettings {
  std::string model{};             // path to the GGUF file; required. A bare file name
                                   // ("x.gguf", no '/') is looked up in model_dir
  std::string model_dir{};         // where bare model names are found; default
                                   // default_model_dir(); "": the working directory
  std::string model_alias{};       // the name in /v1/models, accepted as "model"; default: the
                                   // model's file name without .gguf
  std::string chat_template{};     // the text of the chat-template file, used instead of the
                                   // model's own template; "": the model's
  std::string socket{};            // Unix socket path; default default_socket_path(); "" disables
  std::string host = "127.0.0.1";  // TCP bind address; "" disables TCP
  int port = 8080;                 // 0: any free port (tests)
  std::vector<std::string> allowed_hosts{};  // Host header names accepted besides loopback
  std::vector<std::string> cors_origins{};   // "scheme://host[:port]" (lowercase) or "*"
  std::string api_key{};             // required as "Authorization: Bearer <key>" on TCP; "" = none.
                                     // Printable ASCII without spaces.
  int64_t max_body_bytes = 8 << 20;  // a request body larger than this is refused (413)
  int64_t max_running = 64;          // sequences decoding at once
  int64_t max_waiting = 256;         // requests queued behind them; beyond: 429. 0: no queue
  int64_t max_batch_tokens = 512;    // tokens in one engine step (prefill chunks + decodes)
  int64_t context_length = 0;        // tokens; 0: the model's
  int64_t host_cache_bytes = 0;      // the host KV tier (T1; the CPU backend computes
                                     // in it); 0: enough for max_running sequences at full
                                     // context, capped at 2 GiB (decided at load)
  std::string kv_type = "f16";       // "f16" | "f32"
  int64_t block_tokens = 16;         // tokens per KV block
  std::string cache_dir{};           // the disk KV tier (T2) and its index; default
                                     // default_cache_dir(); "" (none) disables it
  int64_t disk_cache_bytes = int64_t{16} << 30;  // cap on the disk tier's slab files
  std::string persist = "all";       // "all": write full blocks through to disk; "none"
  double disk_retry_seconds = 60;    // after failed disk cache writes, the longest wait
                                     // between tries to write again (they start 1 s apart)
  std::string backend = "auto";      // "auto" (CUDA when a GPU can run it), "cpu", "cuda"
  double vram_cache_fraction = 0.9;  // CUDA: share of the VRAM left after the weights
                                     // that the KV cache (T0) may take
  int threads = 0;                   // compute threads; 0: all cores
  int http_threads = 2;              // threads running the HTTP connections
  double shutdown_grace_seconds = 10;   // on SIGTERM, running requests may finish this long
  double request_timeout_seconds = 60;  // to receive a whole request (headers and body)
  double idle_timeout_seconds = 75;     // a keep-alive connection waiting for its next request
  std::string config_path{};            // the config file that was read; "" when none was
};

// What the command line said, filled in by app.parse through add_serve_options: for
// each setting given, its flag's values in order (several only for a repeated list
// flag). Keys are the settings' keys ("max-waiting"), plus "config".
struct ServeSettingsFlags {
  std::map<std::string, std::vector<std::string>> values{};
};

// Registers one flag per setting on `serve` (-m for --model, -t for --threads) and
// --config PATH ("none": read no file). `flags` must outlive the parse.
void add_serve_options(CLI::App& serve, ServeSettingsFlags& flags);

// The settings, from the config file, then `env`, then `flags`, validated: a model is
// given, kv-type is f16 or f32, numbers are in range, the Unix socket or TCP (or both)
// is enabled, and an API key is set when TCP binds a non-loopback address. "none" for
// socket or host reads as "". Throws ConfigError naming the source and what to change.
ServeSettings resolve_serve_settings(const ServeSettingsFlags& flags,
                                     const Environment& env = process_environment());

// $XDG_RUNTIME_DIR/strata/strata.sock (a user's service), or /run/strata/strata.sock
// when XDG_RUNTIME_DIR is unset or not absolute (the system service).
std::string default_socket_path(const Environment& env);

// $STATE_DIRECTORY/models (systemd's StateDirectory=, the first if several), which is
// /var/lib/strata/models for the packaged service; else "" (the working directory).
std::string default_model_dir(const Environment& env);

// $CACHE_DIRECTORY (systemd's CacheDirectory=, the first if several) when set, which
// is /var/cache/strata for the packaged service; else $XDG_CACHE_HOME/strata, else
// $HOME/.cache/strata; else /var/cache/strata.
std::string default_cache_dir(const Environment& env);

// Whether a bind address or host name is loopback-only: "localhost" (any case),
// 127.0.0.0/8 in dotted-quad form, ::1 (also as "[::1]" or IPv4-mapped 127.x). Other
// spellings of those addresses ("127.1", "2130706433") are not accepted.
bool is_loopback_host(std::string_view host);

// Every setting's key, in --help order: for tests that must cover them all.
std::vector<std::string> serve_setting_keys();

}  // namespace strata
