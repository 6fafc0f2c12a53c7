#include "service/config/serve_settings.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <limits>

#include "common/str_cat.h"
#include "service/config/config_file.h"
#include "service/config/setting_values.h"

namespace strata {
namespace {

// One setting: its name in every source, its --help line, and how a value becomes a
// field of ServeSettings. `parse` throws ConfigError with a message that does not say
// where the value came from; apply() adds that.
struct Setting {
  std::string key{};         // "max-waiting": the file key, --max-waiting, STRATA_MAX_WAITING
  std::string short_flag{};  // "-m", or ""
  std::string value_name{};  // in --help: PATH, N, SECONDS
  std::string help{};
  std::string default_text{};  // in --help; "" shows none
  bool is_list = false;        // comma-separated; the flag is repeatable
  std::function<void(ServeSettings& settings, std::string_view value)> parse{};
};

[[noreturn]] void bad_value(const std::string& message) { throw ConfigError(message); }

// Builders for the table's rows, one per kind of value.

Setting with_short_flag(std::string flag, Setting setting) {
  setting.short_flag = std::move(flag);
  return setting;
}

Setting text(std::string key, std::string value_name, std::string help,
             std::string ServeSettings::*field) {
  return {.key = std::move(key),
          .value_name = std::move(value_name),
          .help = std::move(help),
          .default_text = ServeSettings{}.*field,
          .parse = [field](ServeSettings& s, std::string_view v) { s.*field = std::string(v); }};
}

// A place to listen; "" or "none" turns it off.
Setting endpoint(std::string key, std::string value_name, std::string help,
                 std::string ServeSettings::*field) {
  Setting setting = text(std::move(key), std::move(value_name), std::move(help), field);
  setting.parse = [field](ServeSettings& s, std::string_view v) {
    s.*field = v == "none" ? "" : std::string(v);
  };
  return setting;
}

template <typename Int>
Setting integer(std::string key, std::string help, Int ServeSettings::*field, int64_t min,
                int64_t max = std::numeric_limits<int64_t>::max()) {
  max = std::min<int64_t>(max, std::numeric_limits<Int>::max());
  return {.key = std::move(key),
          .value_name = "N",
          .help = std::move(help),
          .default_text = std::to_string(ServeSettings{}.*field),
          .parse = [field, min, max](ServeSettings& s, std::string_view v) {
            s.*field = static_cast<Int>(parse_integer(v, min, max));
          }};
}

// A size in bytes, with an optional binary suffix: 512M, 8G, 1T.
Setting size(std::string key, std::string help, int64_t ServeSettings::*field, int64_t min) {
  return {.key = std::move(key),
          .value_name = "SIZE",
          .help = std::move(help),
          .default_text = format_size(ServeSettings{}.*field),
          .parse = [field, min](ServeSettings& s, std::string_view v) {
            s.*field = parse_size(v, min);
          }};
}

Setting seconds(std::string key, std::string help, double ServeSettings::*field, Zero zero) {
  return {.key = std::move(key),
          .value_name = "SECONDS",
          .help = std::move(help),
          .default_text = str_cat(ServeSettings{}.*field),
          .parse = [field, zero](ServeSettings& s, std::string_view v) {
            s.*field = parse_seconds(v, zero);
          }};
}

// A share in (0, 1].
Setting fraction(std::string key, std::string help, double ServeSettings::*field) {
  return {.key = std::move(key),
          .value_name = "F",
          .help = std::move(help),
          .default_text = str_cat(ServeSettings{}.*field),
          .parse = [field](ServeSettings& s, std::string_view v) {
            const std::string text(v);
            char* end = nullptr;
            const double value = std::strtod(text.c_str(), &end);
            if (text.empty() || end != text.c_str() + text.size() ||
                !(value > 0.0 && value <= 1.0)) {
              bad_value(str_cat("'", v, "' is not a fraction in (0, 1]"));
            }
            s.*field = value;
          }};
}

// One of a few words.
Setting choice(std::string key, std::string help, std::string ServeSettings::*field,
               std::vector<std::string> allowed) {
  std::string words;
  for (const std::string& word : allowed) words += (words.empty() ? "" : ", ") + word;
  return {.key = std::move(key),
          .value_name = "TYPE",
          .help = str_cat(help, ": ", words),
          .default_text = ServeSettings{}.*field,
          .parse = [field, allowed, words](ServeSettings& s, std::string_view v) {
            if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
              bad_value(str_cat("'", v, "' is not one of: ", words));
            }
            s.*field = std::string(v);
          }};
}

Setting list(std::string key, std::string value_name, std::string help,
             std::vector<std::string> ServeSettings::*field,
             std::string (*parse_item)(std::string_view)) {
  return {.key = std::move(key),
          .value_name = std::move(value_name),
          .help = std::move(help),
          .is_list = true,
          .parse = [field, parse_item](ServeSettings& s, std::string_view v) {
            std::vector<std::string> items;
            for (const std::string& item : split_list(v)) items.push_back(parse_item(item));
            s.*field = std::move(items);
          }};
}

const std::vector<Setting>& settings_table() {
  static const std::vector<Setting> kSettings = {
      with_short_flag("-m", text("model", "PATH",
                                 "GGUF model file (required); a bare file name is looked up "
                                 "in model-dir",
                                 &ServeSettings::model)),
      endpoint("model-dir", "DIR",
               "Folder of models named by file name alone; none: the working directory "
               "(default: $STATE_DIRECTORY/models, /var/lib/strata/models for the service)",
               &ServeSettings::model_dir),
      text("model-alias", "NAME",
           "Model name in /v1/models and requests (default: the file name without .gguf)",
           &ServeSettings::model_alias),
      {.key = "chat-template",
       .value_name = "FILE",
       .help = "Jinja chat template to use instead of the model's own "
               "(tokenizer.chat_template), e.g. a fixed version of it",
       .parse = [](ServeSettings& s, std::string_view v) {
         s.chat_template = read_chat_template_file(std::string(v));
       }},
      endpoint("socket", "PATH",
               "Unix socket to listen on; none: no socket (default: "
               "$XDG_RUNTIME_DIR/strata/strata.sock, or /run/strata/strata.sock)",
               &ServeSettings::socket),
      endpoint("host", "ADDRESS", "TCP address to listen on; none: no TCP", &ServeSettings::host),
      integer("port", "TCP port; 0: any free port", &ServeSettings::port, 0, 65535),
      list("allowed-hosts", "NAME,...",
           "Host header names accepted besides localhost and loopback addresses",
           &ServeSettings::allowed_hosts, &parse_host_name),
      list("cors-origins", "ORIGIN,...",
           "Browser origins allowed to call the API (scheme://host[:port], or *)",
           &ServeSettings::cors_origins, &parse_origin),
      {.key = "api-key",
       .value_name = "KEY",
       .help = "Key TCP clients must send as 'Authorization: Bearer KEY' (on the command "
               "line it shows in ps: prefer api-key-file or STRATA_API_KEY)",
       .parse = [](ServeSettings& s, std::string_view v) { s.api_key = parse_api_key(v); }},
      {.key = "api-key-file",
       .value_name = "PATH",
       .help = "File holding the API key, e.g. a systemd credential",
       .parse = [](ServeSettings& s,
                   std::string_view v) { s.api_key = read_api_key_file(std::string(v)); }},
      integer("max-body-bytes", "Largest request body accepted, in bytes",
              &ServeSettings::max_body_bytes, 1),
      integer("max-running", "Requests generating at once", &ServeSettings::max_running, 1),
      integer("max-waiting", "Requests queued behind them; beyond this they get 429",
              &ServeSettings::max_waiting, 0),
      integer("max-batch-tokens", "Tokens in one engine step", &ServeSettings::max_batch_tokens, 1),
      integer("context-length", "Context length in tokens; 0: the model's",
              &ServeSettings::context_length, 0),
      size("host-cache-size",
           "Host KV cache (RAM; on a GPU the pinned tier below VRAM); 0: max-running full "
           "contexts, at most 2G (on a GPU: 2G)",
           &ServeSettings::host_cache_bytes, 0),
      choice("kv-type", "KV cache type", &ServeSettings::kv_type, {"f16", "f32"}),
      integer("block-tokens", "Tokens per KV block (the unit cached, moved and persisted)",
              &ServeSettings::block_tokens, 1, 1024),
      endpoint("cache-dir", "DIR",
               "Disk KV cache, kept across restarts; none: no disk cache (default: "
               "$XDG_CACHE_HOME/strata, or /var/cache/strata for the service)",
               &ServeSettings::cache_dir),
      size("disk-cache-size", "Disk KV cache size cap", &ServeSettings::disk_cache_bytes, 1),
      choice("persist", "Which full KV blocks are written to the disk cache",
             &ServeSettings::persist, {"all", "none"}),
      seconds("disk-retry-seconds",
              "After disk cache writes fail (full, read-only or failing disk), the longest "
              "wait between tries to write again; they start 1 s apart and double",
              &ServeSettings::disk_retry_seconds, Zero::kRefused),
      choice("backend", "Where the model runs (auto: CUDA when a GPU can run it, else CPU)",
             &ServeSettings::backend, {"auto", "cpu", "cuda"}),
      fraction("vram-cache-fraction",
               "CUDA: share of the VRAM left after the weights for the KV cache",
               &ServeSettings::vram_cache_fraction),
      with_short_flag(
          "-t", integer("threads", "Compute threads; 0: all cores", &ServeSettings::threads, 0)),
      integer("http-threads", "Threads serving HTTP connections", &ServeSettings::http_threads, 1),
      seconds("shutdown-grace-seconds", "On SIGTERM, how long running requests may finish",
              &ServeSettings::shutdown_grace_seconds, Zero::kAllowed),
      seconds("request-timeout-seconds", "Time allowed to receive a whole request",
              &ServeSettings::request_timeout_seconds, Zero::kRefused),
      seconds("idle-timeout-seconds", "How long an idle keep-alive connection stays open",
              &ServeSettings::idle_timeout_seconds, Zero::kRefused),
  };
  return kSettings;
}

const Setting* find_setting(std::string_view key) {
  for (const Setting& s : settings_table()) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

// "max-waiting" -> "STRATA_MAX_WAITING".
std::string env_name(std::string_view key) {
  std::string name = "STRATA_";
  for (char c : key) {
    name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return name;
}

// Optimal string alignment distance: edits, counting a swap of neighbours as one.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::string unknown_setting(std::string_view key) {
  std::string message = str_cat("unknown setting '", key, "'");
  const Setting* nearest = nullptr;
  size_t nearest_distance = 3;  // further than 2 edits is a guess, not a typo
  for (const Setting& s : settings_table()) {
    size_t distance = edit_distance(key, s.key);
    if (distance < nearest_distance && distance < key.size()) {
      nearest = &s;
      nearest_distance = distance;
    }
  }
  if (nearest) message += str_cat(" (did you mean '", nearest->key, "'?)");
  return message;
}

// A value for a setting, and where it came from for messages: "path:7", "STRATA_PORT",
// "--port".
struct Assignment {
  const Setting* setting;
  std::string value;
  std::string source;
};

// One source's values, in order. api-key and api-key-file both set the key: both in
// one source is a contradiction, refused rather than resolved by order.
void apply_source(ServeSettings& settings, const std::vector<Assignment>& source) {
  auto find = [&source](std::string_view key) {
    return std::find_if(source.begin(), source.end(),
                        [key](const Assignment& a) { return a.setting->key == key; });
  };
  auto key = find("api-key");
  auto key_file = find("api-key-file");
  if (key != source.end() && key_file != source.end()) {
    auto [earlier, later] = std::minmax(key, key_file);
    throw ConfigError(str_cat(later->source, ": cannot be combined with ", earlier->source,
                              "; set the API key one way only"));
  }
  for (const Assignment& a : source) {
    try {
      a.setting->parse(settings, a.value);
    } catch (const ConfigError& e) {
      throw ConfigError(str_cat(a.source, ": ", e.what()));
    }
  }
}

std::vector<Assignment> file_assignments(const std::vector<ConfigLine>& lines,
                                         const std::string& path) {
  std::vector<Assignment> out;
  for (const ConfigLine& line : lines) {
    std::string source = str_cat(path, ":", line.line_number);
    if (line.key == "config") {
      throw ConfigError(str_cat(source,
                                ": 'config' cannot be set in a config file; "
                                "pass --config PATH or set STRATA_CONFIG"));
    }
    const Setting* setting = find_setting(line.key);
    if (!setting) throw ConfigError(str_cat(source, ": ", unknown_setting(line.key)));
    out.push_back({setting, line.value, std::move(source)});
  }
  return out;
}

std::vector<Assignment> env_assignments(const Environment& env) {
  std::vector<Assignment> out;
  for (const Setting& s : settings_table()) {
    std::string name = env_name(s.key);
    if (std::optional<std::string> value = env(name)) out.push_back({&s, *value, name});
  }
  return out;
}

// A repeated list flag's values join with commas, the list syntax of the other sources.
std::vector<Assignment> flag_assignments(const ServeSettingsFlags& flags) {
  std::vector<Assignment> out;
  for (const Setting& s : settings_table()) {
    auto it = flags.values.find(s.key);
    if (it == flags.values.end() || it->second.empty()) continue;
    std::string value = it->second.back();  // CLI11 keeps only the last of a repeated flag
    if (s.is_list) {
      value.clear();
      for (const std::string& v : it->second) value += (value.empty() ? "" : ",") + v;
    }
    out.push_back({&s, std::move(value), "--" + s.key});
  }
  return out;
}

// The config file to read: --config, else STRATA_CONFIG, else the default path. The
// default may be missing (a user's service, a test); a path someone gave may not.
struct ConfigFileChoice {
  std::string path;    // "" when "none" was asked for
  std::string source;  // "--config", "STRATA_CONFIG", or "" for the default
};

ConfigFileChoice choose_config_file(const ServeSettingsFlags& flags, const Environment& env) {
  ConfigFileChoice choice{.path = std::string(kDefaultConfigPath), .source = ""};
  if (auto it = flags.values.find("config"); it != flags.values.end() && !it->second.empty()) {
    choice = {.path = it->second.back(), .source = "--config"};
  } else if (std::optional<std::string> value = env("STRATA_CONFIG")) {
    choice = {.path = *value, .source = "STRATA_CONFIG"};
  }
  if (choice.path == "none") choice.path.clear();
  return choice;
}

// The file's text; nullopt when the default file does not exist.
std::optional<std::string> read_config_file(const ConfigFileChoice& config) {
  const std::string where = config.source.empty() ? "" : config.source + ": ";
  std::optional<std::string> text;
  try {
    text = read_text_file(config.path);
  } catch (const ConfigError& e) {
    throw ConfigError(where + e.what());
  }
  if (!text && !config.source.empty()) {
    throw ConfigError(str_cat(where, "cannot read '", config.path, "': No such file or directory"));
  }
  return text;
}

// A bare file name is a name in model_dir; a path (anything with '/') is left alone.
std::string model_path_in(const std::string& model, const std::string& model_dir) {
  if (model.empty() || model_dir.empty() || model.find('/') != std::string::npos) return model;
  return str_cat(model_dir, model_dir.ends_with('/') ? "" : "/", model);
}

std::string model_file_stem(const std::string& model_path) {
  std::string name = model_path.substr(model_path.find_last_of('/') + 1);
  constexpr std::string_view kExtension = ".gguf";
  if (name.size() > kExtension.size() && name.ends_with(kExtension)) {
    name.resize(name.size() - kExtension.size());
  }
  return name;
}

void validate(const ServeSettings& s, const ConfigFileChoice& config) {
  if (s.model.empty()) {
    throw ConfigError(
        config.path.empty()
            ? "no model: pass --model PATH or set STRATA_MODEL"
            : str_cat("no model: pass --model PATH or set model = PATH in ", config.path));
  }
  if (s.socket.empty() && s.host.empty()) {
    throw ConfigError(
        "nothing to listen on: the Unix socket and TCP are both disabled; set socket = PATH, "
        "host = 127.0.0.1, or both");
  }
  if (!s.host.empty() && !is_loopback_host(s.host) && s.api_key.empty()) {
    throw ConfigError(
        str_cat("host = ", s.host,
                " accepts connections from other machines, so an API key is "
                "required: put one in a file and set api-key-file = PATH (or STRATA_API_KEY_FILE, "
                "or --api-key-file PATH), or listen on host = 127.0.0.1 only"));
  }
}

}  // namespace

void add_serve_options(CLI::App& serve, ServeSettingsFlags& flags) {
  serve
      .add_option_function<std::string>(
          "--config", [&flags](const std::string& v) { flags.values["config"] = {v}; },
          "Config file; none: read no file (default: /etc/strata/strata.conf)")
      ->type_name("PATH")
      ->take_last();
  for (const Setting& s : settings_table()) {
    std::string names = (s.short_flag.empty() ? "" : s.short_flag + ",") + "--" + s.key;
    std::string help = s.help + (s.is_list ? " (repeatable)" : "");
    CLI::Option* option = nullptr;
    if (s.is_list) {
      option = serve.add_option_function<std::vector<std::string>>(
          names,
          [&flags, key = s.key](const std::vector<std::string>& v) { flags.values[key] = v; },
          help);
      option->expected(1)->allow_extra_args(false)->take_all();  // one value per flag
    } else {
      option = serve.add_option_function<std::string>(
          names, [&flags, key = s.key](const std::string& v) { flags.values[key] = {v}; }, help);
      option->take_last();
    }
    option->type_name(s.value_name)->default_str(s.default_text);
  }
  serve.footer(
      "Each flag is also a config file key (--max-waiting: max-waiting = N in "
      "/etc/strata/strata.conf) and an environment variable (STRATA_MAX_WAITING). "
      "Flags override the environment, which overrides the file.");
}

ServeSettings resolve_serve_settings(const ServeSettingsFlags& flags, const Environment& env) {
  ServeSettings settings;
  settings.socket = default_socket_path(env);
  settings.cache_dir = default_cache_dir(env);
  settings.model_dir = default_model_dir(env);

  ConfigFileChoice config = choose_config_file(flags, env);
  std::optional<std::string> text;
  if (!config.path.empty()) text = read_config_file(config);
  if (text) {
    apply_source(settings, file_assignments(parse_config_text(*text, config.path), config.path));
    settings.config_path = config.path;
  }
  apply_source(settings, env_assignments(env));
  apply_source(settings, flag_assignments(flags));

  settings.model = model_path_in(settings.model, settings.model_dir);
  if (settings.model_alias.empty()) settings.model_alias = model_file_stem(settings.model);
  validate(settings, config);
  return settings;
}

std::string default_socket_path(const Environment& env) {
  std::optional<std::string> runtime_dir = env("XDG_RUNTIME_DIR");
  // The XDG spec says to ignore a relative XDG_RUNTIME_DIR.
  if (runtime_dir && runtime_dir->starts_with('/')) return *runtime_dir + "/strata/strata.sock";
  return "/run/strata/strata.sock";
}

std::string default_model_dir(const Environment& env) {
  if (std::optional<std::string> systemd = env("STATE_DIRECTORY"); systemd && !systemd->empty()) {
    return systemd->substr(0, systemd->find(':')) + "/models";
  }
  return "";
}

std::string default_cache_dir(const Environment& env) {
  if (std::optional<std::string> systemd = env("CACHE_DIRECTORY"); systemd && !systemd->empty()) {
    return systemd->substr(0, systemd->find(':'));
  }
  // As for XDG_RUNTIME_DIR, the XDG spec says to ignore a relative path.
  if (std::optional<std::string> xdg = env("XDG_CACHE_HOME"); xdg && xdg->starts_with('/')) {
    return *xdg + "/strata";
  }
  if (std::optional<std::string> home = env("HOME"); home && home->starts_with('/')) {
    return *home + "/.cache/strata";
  }
  return "/var/cache/strata";
}

bool is_loopback_host(std::string_view host) {
  constexpr std::string_view kLocalhost = "localhost";
  bool is_localhost =
      std::equal(host.begin(), host.end(), kLocalhost.begin(), kLocalhost.end(),
                 [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  if (is_localhost) return true;
  if (host.find('\0') != std::string_view::npos) return false;  // inet_pton would stop there
  bool bracketed = host.size() > 2 && host.front() == '[' && host.back() == ']';
  std::string address(bracketed ? host.substr(1, host.size() - 2) : host);
  in_addr v4{};
  if (!bracketed && inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, address.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

std::vector<std::string> serve_setting_keys() {
  std::vector<std::string> keys;
  for (const Setting& s : settings_table()) keys.push_back(s.key);
  return keys;
}

}  // namespace strata
