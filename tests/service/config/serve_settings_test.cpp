#include "service/config/serve_settings.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace strata {
namespace {

using Env = std::map<std::string, std::string>;
using Args = std::vector<std::string>;

// A fresh directory for config and key files, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "strata_serve_settings_XXXXXX";
    char* made = mkdtemp(pattern.data());
    if (made == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = made;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }

  std::string write(const std::string& name, const std::string& text) const {
    std::string path = path_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The flags of `strata serve ARGS...`, parsed by CLI11 as main does.
ServeSettingsFlags parse_flags(Args args) {
  ServeSettingsFlags flags;
  CLI::App app;
  CLI::App* serve = app.add_subcommand("serve");
  add_serve_options(*serve, flags);
  args.insert(args.begin(), "serve");
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector back to front
  app.parse(args);
  return flags;
}

// Settings from ARGS and ENV. Unless the test names a config file, none is read, so
// that a /etc/strata/strata.conf on the machine cannot change the results.
ServeSettings resolve(const Args& args, Env env = {}) {
  env.emplace("STRATA_CONFIG", "none");
  return resolve_serve_settings(parse_flags(args), fixed_environment(env));
}

std::string error_of(const Args& args, Env env = {}) {
  try {
    resolve(args, std::move(env));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ServeSettingsTest, DefaultsNeedOnlyAModel) {
  ServeSettings s = resolve({"-m", "/models/Llama-3.2-1B.Q8_0.gguf"});
  ServeSettings defaults;
  EXPECT_EQ(s.model, "/models/Llama-3.2-1B.Q8_0.gguf");
  EXPECT_EQ(s.model_alias, "Llama-3.2-1B.Q8_0");
  EXPECT_EQ(s.socket, "/run/strata/strata.sock") << "no XDG_RUNTIME_DIR: the system service";
  EXPECT_EQ(s.host, "127.0.0.1");
  EXPECT_EQ(s.port, 8080);
  EXPECT_TRUE(s.allowed_hosts.empty());
  EXPECT_TRUE(s.cors_origins.empty());
  EXPECT_EQ(s.api_key, "");
  EXPECT_EQ(s.max_body_bytes, 8 << 20);
  EXPECT_EQ(s.max_running, defaults.max_running);
  EXPECT_EQ(s.kv_type, "f16");
  EXPECT_EQ(s.shutdown_grace_seconds, 10);
  EXPECT_EQ(s.config_path, "");
}

TEST(ServeSettingsTest, FileThenEnvironmentThenFlags) {
  TempDir dir;
  std::string config = dir.write("strata.conf",
                                 "model = /file.gguf\n"
                                 "port = 1111\n"
                                 "max-waiting = 11\n"
                                 "kv-type = f32\n"
                                 "allowed-hosts = file.lan\n"
                                 "idle-timeout-seconds = 5\n");
  ServeSettings s = resolve({"--port", "3333", "--idle-timeout-seconds", "7.5"},
                            {{"STRATA_CONFIG", config},
                             {"STRATA_MODEL", "/env.gguf"},
                             {"STRATA_PORT", "2222"},
                             {"STRATA_ALLOWED_HOSTS", "env.lan"},
                             {"STRATA_IDLE_TIMEOUT_SECONDS", "6"}});
  EXPECT_EQ(s.model, "/env.gguf") << "the environment over the file";
  EXPECT_EQ(s.model_alias, "env") << "derived after all sources";
  EXPECT_EQ(s.port, 3333) << "a flag over both";
  EXPECT_EQ(s.max_waiting, 11) << "the file alone";
  EXPECT_EQ(s.kv_type, "f32");
  EXPECT_EQ(s.allowed_hosts, std::vector<std::string>{"env.lan"})
      << "a list is replaced, not merged";
  EXPECT_EQ(s.idle_timeout_seconds, 7.5);
  EXPECT_EQ(s.config_path, config);
}

TEST(ServeSettingsTest, ConfigFileSyntax) {
  TempDir dir;
  std::string config = dir.write("strata.conf",
                                 "# Strata's settings\n"
                                 "\n"
                                 "  # indented comment\n"
                                 "MODEL = \"/models/My Model.gguf\"\n"
                                 "model_alias='mine'\n"
                                 "api-key = \"k#1\"\n"
                                 "cors-origins = \"http://localhost:3000, https://Chat.Example\"\n"
                                 "socket =\n");
  ServeSettings s = resolve({"--config", config});
  EXPECT_EQ(s.model, "/models/My Model.gguf");
  EXPECT_EQ(s.model_alias, "mine");
  EXPECT_EQ(s.api_key, "k#1");
  EXPECT_EQ(s.cors_origins,
            (std::vector<std::string>{"http://localhost:3000", "https://chat.example"}))
      << "origins are lowercased, as browsers send them";
  EXPECT_EQ(s.socket, "") << "an empty value disables the socket";
}

TEST(ServeSettingsTest, ListsFromEverySource) {
  TempDir dir;
  std::string config = dir.write("a.conf", "model = /m.gguf\nallowed-hosts = a.lan, B.lan ,,\n");
  EXPECT_EQ(resolve({"--config", config}).allowed_hosts,
            (std::vector<std::string>{"a.lan", "b.lan"}));
  EXPECT_EQ(resolve({"--config", config}, {{"STRATA_ALLOWED_HOSTS", "c.lan,d.lan"}}).allowed_hosts,
            (std::vector<std::string>{"c.lan", "d.lan"}));
  EXPECT_EQ(resolve({"--config", config, "--allowed-hosts", "e.lan,f.lan", "--allowed-hosts",
                     "g.lan:8080"})
                .allowed_hosts,
            (std::vector<std::string>{"e.lan", "f.lan", "g.lan:8080"}))
      << "the flag repeats and takes commas";
  EXPECT_TRUE(resolve({"--config", config}, {{"STRATA_ALLOWED_HOSTS", ""}}).allowed_hosts.empty())
      << "an empty value empties the list";
}

TEST(ServeSettingsTest, FlagsRepeatedAndShort) {
  ServeSettings s = resolve({"-m", "/a.gguf", "--port", "1", "--port", "2", "-t", "3"});
  EXPECT_EQ(s.port, 2) << "the last of a repeated flag wins";
  EXPECT_EQ(s.threads, 3);
  s = resolve({"--model=/a.gguf", "--socket", "none", "--port=0"});
  EXPECT_EQ(s.socket, "");
  EXPECT_EQ(s.port, 0);
  s = resolve({"--model", "/a.gguf", "--host", ""});
  EXPECT_EQ(s.host, "") << "TCP off, the socket on";
  EXPECT_THROW(parse_flags({"--allowed-hosts", "a.lan", "b.lan"}), CLI::ParseError)
      << "one value per flag, so a list flag cannot swallow what follows it";
  EXPECT_THROW(parse_flags({"--prot", "1"}), CLI::ParseError);
}

TEST(ServeSettingsTest, ApiKeyFile) {
  TempDir dir;
  std::string key_file = dir.write("key", "  sk-from-file\n");
  EXPECT_EQ(resolve({"-m", "/a.gguf", "--api-key-file", key_file}).api_key, "sk-from-file");
  EXPECT_EQ(resolve({"-m", "/a.gguf", "--api-key-file", key_file}, {{"STRATA_API_KEY", "sk-env"}})
                .api_key,
            "sk-from-file")
      << "a key file from a higher source replaces a key from a lower one";
  EXPECT_EQ(resolve({"-m", "/a.gguf", "--api-key", "sk-flag"}, {{"STRATA_API_KEY_FILE", key_file}})
                .api_key,
            "sk-flag");

  EXPECT_EQ(error_of({"-m", "/a.gguf", "--api-key-file", dir.path() + "/none"}),
            "--api-key-file: cannot read '" + dir.path() + "/none': No such file or directory");
  std::string empty = dir.write("empty", "\n\n");
  EXPECT_EQ(error_of({"-m", "/a.gguf"}, {{"STRATA_API_KEY_FILE", empty}}),
            "STRATA_API_KEY_FILE: '" + empty + "' is empty");
  std::string two_lines = dir.write("two", "sk-a\nsk-b\n");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--api-key-file", two_lines}),
            "--api-key-file: the API key must be printable ASCII without spaces");
  EXPECT_EQ(error_of({"-m", "/a.gguf"}, {{"STRATA_API_KEY", "sk a"}}),
            "STRATA_API_KEY: the API key must be printable ASCII without spaces");
  EXPECT_EQ(
      error_of({"-m", "/a.gguf"}, {{"STRATA_API_KEY", "a"}, {"STRATA_API_KEY_FILE", key_file}}),
      "STRATA_API_KEY_FILE: cannot be combined with STRATA_API_KEY; set the API key one way only");
  std::string config = dir.write("c.conf", "api-key-file = " + key_file + "\napi-key = x\n");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--config", config}),
            config + ":2: cannot be combined with " + config + ":1; set the API key one way only");
}

// The file's text, read at start-up so that a wrong path stops the server before it loads
// the model; whether the template can run is checked when the model loads.
TEST(ServeSettingsTest, ChatTemplateFile) {
  TempDir dir;
  std::string file = dir.write("t.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}");
  EXPECT_EQ(resolve({"-m", "/a.gguf", "--chat-template", file}).chat_template,
            "{% for m in messages %}{{ m.content }}{% endfor %}");
  EXPECT_EQ(resolve({"-m", "/a.gguf"}).chat_template, "") << "none: the model's own";
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--chat-template", dir.path() + "/none.jinja"}),
            "--chat-template: cannot read '" + dir.path() +
                "/none.jinja': No such file or directory");
  std::string blank = dir.write("blank.jinja", " \n");
  EXPECT_EQ(error_of({"-m", "/a.gguf"}, {{"STRATA_CHAT_TEMPLATE", blank}}),
            "STRATA_CHAT_TEMPLATE: '" + blank + "' is empty");
}

TEST(ServeSettingsTest, ConfigFileChoice) {
  TempDir dir;
  // The default path: missing is fine (this machine has no /etc/strata/strata.conf).
  if (std::filesystem::exists(kDefaultConfigPath)) GTEST_SKIP() << kDefaultConfigPath << " exists";
  ServeSettings s = resolve_serve_settings(parse_flags({"-m", "/a.gguf"}), fixed_environment({}));
  EXPECT_EQ(s.config_path, "");

  std::string missing = dir.path() + "/missing.conf";
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--config", missing}),
            "--config: cannot read '" + missing + "': No such file or directory");
  EXPECT_EQ(error_of({"-m", "/a.gguf"}, {{"STRATA_CONFIG", missing}}),
            "STRATA_CONFIG: cannot read '" + missing + "': No such file or directory");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--config", dir.path()}),
            "--config: cannot read '" + dir.path() + "': Is a directory");

  std::string from_env = dir.write("env.conf", "model = /env-file.gguf\n");
  std::string from_flag = dir.write("flag.conf", "model = /flag-file.gguf\n");
  EXPECT_EQ(resolve({}, {{"STRATA_CONFIG", from_env}}).model, "/env-file.gguf");
  EXPECT_EQ(resolve({"--config", from_flag}, {{"STRATA_CONFIG", from_env}}).model,
            "/flag-file.gguf");
  EXPECT_EQ(
      resolve({"--config", "none", "-m", "/a.gguf"}, {{"STRATA_CONFIG", from_env}}).config_path,
      "");
}

TEST(ServeSettingsTest, ErrorsNameTheSourceAndLine) {
  TempDir dir;
  std::string config = dir.write("strata.conf",
                                 "# settings\n"
                                 "model = /a.gguf\n"
                                 "\n"
                                 "host = 127.0.0.1\n"
                                 "max-running = 8\n"
                                 "# the port\n"
                                 "prot = 9000\n");
  EXPECT_EQ(error_of({"--config", config}),
            config + ":7: unknown setting 'prot' (did you mean 'port'?)");
  std::string far = dir.write("far.conf", "model = /a.gguf\nbanana = 1\n");
  EXPECT_EQ(error_of({"--config", far}), far + ":2: unknown setting 'banana'");
  std::string typo = dir.write("typo.conf", "max-wating = 1\n");
  EXPECT_EQ(error_of({"--config", typo}),
            typo + ":1: unknown setting 'max-wating' (did you mean 'max-waiting'?)");
  std::string nested = dir.write("nested.conf", "config = /other.conf\n");
  EXPECT_EQ(
      error_of({"--config", nested}),
      nested +
          ":1: 'config' cannot be set in a config file; pass --config PATH or set STRATA_CONFIG");
  std::string range = dir.write("range.conf", "max-running = 0\n");
  EXPECT_EQ(error_of({"--config", range}), range + ":1: 0 is out of range: must be at least 1");

  const Args m = {"-m", "/a.gguf"};
  EXPECT_EQ(error_of(m, {{"STRATA_PORT", "abc"}}), "STRATA_PORT: 'abc' is not an integer");
  EXPECT_EQ(error_of(m, {{"STRATA_PORT", ""}}), "STRATA_PORT: '' is not an integer");
  EXPECT_EQ(error_of(m, {{"STRATA_PORT", "80 80"}}), "STRATA_PORT: '80 80' is not an integer");
  EXPECT_EQ(error_of(m, {{"STRATA_MAX_WAITING", "1.5"}}),
            "STRATA_MAX_WAITING: '1.5' is not an integer");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--port", "70000"}),
            "--port: 70000 is out of range: must be 0 to 65535");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--port", "-1"}),
            "--port: -1 is out of range: must be 0 to 65535");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--max-body-bytes", "99999999999999999999"}),
            "--max-body-bytes: 99999999999999999999 is out of range: must be at least 1");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--threads", "9999999999"}),
            "--threads: 9999999999 is out of range: must be 0 to 2147483647");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--http-threads", "0"}),
            "--http-threads: 0 is out of range: must be at least 1");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--max-waiting", "-1"}),
            "--max-waiting: -1 is out of range: must be at least 0");
  EXPECT_EQ(error_of(m, {{"STRATA_REQUEST_TIMEOUT_SECONDS", "0"}}),
            "STRATA_REQUEST_TIMEOUT_SECONDS: 0 is out of range: must be more than 0");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--shutdown-grace-seconds", "-1"}),
            "--shutdown-grace-seconds: -1 is out of range: must be at least 0");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--idle-timeout-seconds", "soon"}),
            "--idle-timeout-seconds: 'soon' is not a number of seconds");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--idle-timeout-seconds", "inf"}),
            "--idle-timeout-seconds: 'inf' is not a number of seconds");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--kv-type", "q8_0"}),
            "--kv-type: 'q8_0' is not one of: f16, f32");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--backend", "rocm"}),
            "--backend: 'rocm' is not one of: auto, cpu, cuda");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--vram-cache-fraction", "1.5"}),
            "--vram-cache-fraction: '1.5' is not a fraction in (0, 1]");
  EXPECT_EQ(error_of(m, {{"STRATA_VRAM_CACHE_FRACTION", "0"}}),
            "STRATA_VRAM_CACHE_FRACTION: '0' is not a fraction in (0, 1]");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--allowed-hosts", "http://box.lan/"}),
            "--allowed-hosts: 'http://box.lan/' is not a host name: write it as it appears in the "
            "URL, without scheme or path, e.g. 'box.lan'");
  EXPECT_EQ(error_of(m, {{"STRATA_CORS_ORIGINS", "http://localhost:3000/"}}),
            "STRATA_CORS_ORIGINS: 'http://localhost:3000/' is not an origin: write "
            "scheme://host[:port], e.g. 'http://localhost:3000', or * (without the trailing "
            "slash: 'http://localhost:3000')");
  EXPECT_EQ(error_of(m, {{"STRATA_CORS_ORIGINS", "localhost:3000"}}),
            "STRATA_CORS_ORIGINS: 'localhost:3000' is not an origin: write scheme://host[:port], "
            "e.g. 'http://localhost:3000', or *");
}

TEST(ServeSettingsTest, ValidationAfterAllSources) {
  EXPECT_EQ(error_of({}), "no model: pass --model PATH or set STRATA_MODEL");
  if (!std::filesystem::exists(kDefaultConfigPath)) {
    try {
      resolve_serve_settings(parse_flags({}), fixed_environment({}));
      ADD_FAILURE() << "no model accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()),
                "no model: pass --model PATH or set model = PATH in /etc/strata/strata.conf");
    }
  }
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--socket", "none", "--host", "none"}),
            "nothing to listen on: the Unix socket and TCP are both disabled; set socket = PATH, "
            "host = 127.0.0.1, or both");
  EXPECT_EQ(error_of({"-m", "/a.gguf", "--host", "0.0.0.0"}),
            "host = 0.0.0.0 accepts connections from other machines, so an API key is required: "
            "put one in a file and set api-key-file = PATH (or STRATA_API_KEY_FILE, or "
            "--api-key-file PATH), or listen on host = 127.0.0.1 only");
  EXPECT_EQ(resolve({"-m", "/a.gguf", "--host", "0.0.0.0"}, {{"STRATA_API_KEY", "sk-1"}}).host,
            "0.0.0.0");
  EXPECT_EQ(resolve({"-m", "/a.gguf", "--host", "::1"}).host, "::1");
  EXPECT_EQ(resolve({"-m", "/a.gguf", "--host", "localhost"}).host, "localhost");
}

// Every setting in the table, set from each source in turn: a new setting without a
// sample here fails the test, so none can be left out of a source.
struct Sample {
  std::string value;
  std::function<bool(const ServeSettings&)> took_effect;
};

std::map<std::string, Sample> samples(const std::string& key_file,
                                      const std::string& template_file) {
  using S = const ServeSettings&;
  return {
      {"model", {"/models/x.gguf", [](S s) { return s.model == "/models/x.gguf"; }}},
      {"model-alias", {"x-chat", [](S s) { return s.model_alias == "x-chat"; }}},
      {"model-dir", {"/srv/models", [](S s) { return s.model_dir == "/srv/models"; }}},
      {"chat-template",
       {template_file, [](S s) { return s.chat_template == "{{ messages[0].content }}\n"; }}},
      {"socket", {"/tmp/x.sock", [](S s) { return s.socket == "/tmp/x.sock"; }}},
      {"host", {"127.0.0.2", [](S s) { return s.host == "127.0.0.2"; }}},
      {"port", {"9001", [](S s) { return s.port == 9001; }}},
      {"allowed-hosts",
       {"a.lan,b.lan",
        [](S s) {
          return s.allowed_hosts == std::vector<std::string>{"a.lan", "b.lan"};
        }}},
      {"cors-origins",
       {"http://localhost:3000",
        [](S s) { return s.cors_origins == std::vector<std::string>{"http://localhost:3000"}; }}},
      {"api-key", {"sk-sample", [](S s) { return s.api_key == "sk-sample"; }}},
      {"api-key-file", {key_file, [](S s) { return s.api_key == "sk-in-file"; }}},
      {"max-body-bytes", {"1000", [](S s) { return s.max_body_bytes == 1000; }}},
      {"max-running", {"3", [](S s) { return s.max_running == 3; }}},
      {"max-waiting", {"0", [](S s) { return s.max_waiting == 0; }}},
      {"max-batch-tokens", {"4096", [](S s) { return s.max_batch_tokens == 4096; }}},
      {"context-length", {"2048", [](S s) { return s.context_length == 2048; }}},
      {"host-cache-size", {"512M", [](S s) { return s.host_cache_bytes == 512 << 20; }}},
      {"block-tokens", {"32", [](S s) { return s.block_tokens == 32; }}},
      {"cache-dir", {"/tmp/kv", [](S s) { return s.cache_dir == "/tmp/kv"; }}},
      {"disk-cache-size", {"8G", [](S s) { return s.disk_cache_bytes == int64_t{8} << 30; }}},
      {"persist", {"none", [](S s) { return s.persist == "none"; }}},
      {"disk-retry-seconds", {"0.5", [](S s) { return s.disk_retry_seconds == 0.5; }}},
      {"kv-type", {"f32", [](S s) { return s.kv_type == "f32"; }}},
      {"backend", {"cpu", [](S s) { return s.backend == "cpu"; }}},
      {"vram-cache-fraction", {"0.5", [](S s) { return s.vram_cache_fraction == 0.5; }}},
      {"threads", {"6", [](S s) { return s.threads == 6; }}},
      {"http-threads", {"4", [](S s) { return s.http_threads == 4; }}},
      {"shutdown-grace-seconds", {"0", [](S s) { return s.shutdown_grace_seconds == 0; }}},
      {"request-timeout-seconds", {"2.5", [](S s) { return s.request_timeout_seconds == 2.5; }}},
      {"idle-timeout-seconds", {"30", [](S s) { return s.idle_timeout_seconds == 30; }}},
  };
}

std::string env_name(std::string key) {
  std::transform(key.begin(), key.end(), key.begin(),
                 [](char c) { return c == '-' ? '_' : static_cast<char>(std::toupper(c)); });
  return "STRATA_" + key;
}

TEST(ServeSettingsTest, EverySettingFromEverySource) {
  TempDir dir;
  std::map<std::string, Sample> table =
      samples(dir.write("key", "sk-in-file\n"),
              dir.write("chat.jinja", "{{ messages[0].content }}\n"));
  std::vector<std::string> keys = serve_setting_keys();
  ASSERT_EQ(keys.size(), table.size()) << "a setting was added or removed: update samples()";
  for (const std::string& key : keys) {
    auto sample = table.find(key);
    ASSERT_NE(sample, table.end()) << "no sample for '" << key << "': add one to samples()";
    const std::string& value = sample->second.value;
    SCOPED_TRACE(key + " = " + value);
    // The model is required; the base gives one unless the sample sets it.
    const std::string base_model = key == "model" ? "" : "model = /base.gguf\n";

    std::string config = dir.write(key + ".conf", base_model + key + " = " + value + "\n");
    EXPECT_TRUE(sample->second.took_effect(resolve({}, {{"STRATA_CONFIG", config}})))
        << "from the file";

    std::string env_config = dir.write(key + "-base.conf", base_model);
    EXPECT_TRUE(sample->second.took_effect(
        resolve({}, {{"STRATA_CONFIG", env_config}, {env_name(key), value}})))
        << "from " << env_name(key);

    EXPECT_TRUE(sample->second.took_effect(resolve({"--config", env_config, "--" + key, value})))
        << "from --" << key;
  }
}

TEST(ServeSettingsTest, HelpListsEveryFlag) {
  ServeSettingsFlags flags;
  CLI::App app;
  CLI::App* serve = app.add_subcommand("serve");
  add_serve_options(*serve, flags);
  std::string help = serve->help();
  for (const std::string& key : serve_setting_keys())
    EXPECT_NE(help.find("--" + key), std::string::npos) << key;
  EXPECT_NE(help.find("--config"), std::string::npos);
  EXPECT_NE(help.find("-m,--model"), std::string::npos);
  EXPECT_NE(help.find("--port N=8080"), std::string::npos) << help;
}

// The packaged service finds models named by file name in /var/lib/strata/models:
// systemd's StateDirectory=strata sets STATE_DIRECTORY=/var/lib/strata.
TEST(ServeSettingsTest, ModelDir) {
  const Env service{{"STATE_DIRECTORY", "/var/lib/strata"}};
  ServeSettings s = resolve({"-m", "chat.gguf"}, service);
  EXPECT_EQ(s.model_dir, "/var/lib/strata/models");
  EXPECT_EQ(s.model, "/var/lib/strata/models/chat.gguf");
  EXPECT_EQ(s.model_alias, "chat");
  EXPECT_EQ(resolve({"-m", "chat.gguf"}, {{"STATE_DIRECTORY", "/var/lib/a:/var/lib/b"}}).model,
            "/var/lib/a/models/chat.gguf")
      << "the first of several state directories";

  EXPECT_EQ(resolve({"-m", "./chat.gguf"}, service).model, "./chat.gguf") << "a path stays";
  EXPECT_EQ(resolve({"-m", "/usr/share/strata/models/demo.gguf"}, service).model,
            "/usr/share/strata/models/demo.gguf");
  EXPECT_EQ(resolve({"-m", "chat.gguf", "--model-dir", "/srv/models/"}, service).model,
            "/srv/models/chat.gguf");
  EXPECT_EQ(resolve({"-m", "chat.gguf", "--model-dir", "none"}, service).model, "chat.gguf");

  ServeSettings by_hand = resolve({"-m", "chat.gguf"});
  EXPECT_EQ(by_hand.model_dir, "") << "outside systemd: the working directory, as before";
  EXPECT_EQ(by_hand.model, "chat.gguf");
  EXPECT_EQ(resolve({"-m", "chat.gguf"}, {{"STATE_DIRECTORY", ""}}).model, "chat.gguf");
}

TEST(ServeSettingsTest, DefaultSocketPath) {
  EXPECT_EQ(default_socket_path(fixed_environment({{"XDG_RUNTIME_DIR", "/run/user/1000"}})),
            "/run/user/1000/strata/strata.sock");
  EXPECT_EQ(default_socket_path(fixed_environment({})), "/run/strata/strata.sock");
  EXPECT_EQ(default_socket_path(fixed_environment({{"XDG_RUNTIME_DIR", ""}})),
            "/run/strata/strata.sock");
  EXPECT_EQ(default_socket_path(fixed_environment({{"XDG_RUNTIME_DIR", "run/user/1"}})),
            "/run/strata/strata.sock")
      << "the XDG spec: ignore a relative path";
  EXPECT_EQ(resolve({"-m", "/a.gguf"}, {{"XDG_RUNTIME_DIR", "/run/user/7"}}).socket,
            "/run/user/7/strata/strata.sock");
}

TEST(ServeSettingsTest, LoopbackHosts) {
  for (std::string_view host :
       {"localhost", "LocalHost", "127.0.0.1", "127.1.2.3", "127.255.255.255", "::1", "[::1]",
        "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"}) {
    EXPECT_TRUE(is_loopback_host(host)) << host;
  }
  for (std::string_view host :
       {"", "0.0.0.0", "::", "128.0.0.1", "126.255.255.255", "10.0.0.1", "127.1", "2130706433",
        "0x7f000001", "127.0.0.1.evil.com", "localhost.evil.com", "[127.0.0.1]", "::2", "[::1",
        "::ffff:10.0.0.1"}) {
    EXPECT_FALSE(is_loopback_host(host)) << host;
  }
  EXPECT_FALSE(is_loopback_host(std::string_view("127.0.0.1\0x", 11)));
}

}  // namespace
}  // namespace strata
