// strata stats [--server SOCKET] [--json]: the KV cache of a running
// `strata serve`, per tier (GET /v1/cache), as a few lines or as the JSON.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "common/str_cat.h"
#include "service/cli/commands.h"
#include "service/client/daemon_client.h"
#include "service/config/serve_settings.h"

namespace strata {
namespace {

struct StatsOptions {
  std::string socket_path;
  bool json = false;
};

// 17179869184 -> "16.0 GiB".
std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return text;
}

std::string tier_line(const nlohmann::json& tier) {
  const std::string name = tier.value("tier", "?");
  if (name == "disk") {
    return str_cat("disk: ", tier.value("blocks", 0), " of ", tier.value("capacity_blocks", 0),
                   " blocks (", human_bytes(tier.value("bytes", 0.0)), " of ",
                   human_bytes(tier.value("capacity_bytes", 0.0)), "), persist ",
                   tier.value("persist", "?"),
                   tier.value("writes_enabled", false) ? "" : ", writes OFF (failing; retried)",
                   "; ",
                   tier.value("loads", 0), " blocks loaded, ", tier.value("load_failures", 0),
                   " failed; ", human_bytes(tier.value("bytes_written", 0.0)), " written, ",
                   human_bytes(tier.value("bytes_read", 0.0)), " read; ",
                   tier.value("moves_in_flight", 0), " moves in flight");
  }
  return str_cat(name, ": ", tier.value("blocks_used", 0), " blocks in use, ",
                 tier.value("blocks_cached", 0), " cached, of ", tier.value("capacity_blocks", 0),
                 " (", human_bytes(tier.value("capacity_bytes", 0.0)), "); ",
                 tier.value("block_hits", 0), " block hits");
}

void print_stats(const StatsOptions& o) {
  DaemonClient client(o.socket_path);
  const nlohmann::json cache = client.get_json("/v1/cache");
  if (o.json) {
    std::cout << cache.dump(2) << "\n";
    return;
  }
  for (const nlohmann::json& tier : cache.value("tiers", nlohmann::json::array())) {
    std::cout << tier_line(tier) << "\n";
  }
  const double prompt = cache.value("prompt_tokens", 0.0);
  const double cached = cache.value("cached_prompt_tokens", 0.0);
  std::printf("prompt tokens: %.0f, %.0f from cache (%.1f%%); blocks of %d tokens, %s each\n",
              prompt, cached, prompt > 0 ? 100 * cached / prompt : 0.0,
              cache.value("block_tokens", 0), human_bytes(cache.value("block_bytes", 0.0)).c_str());
}

}  // namespace

void add_stats_command(CLI::App& app) {
  auto o = std::make_shared<StatsOptions>();
  o->socket_path = default_socket_path(process_environment());
  CLI::App* cmd = app.add_subcommand("stats", "The KV cache of a running `strata serve`, per tier");
  cmd->add_option("--server", o->socket_path, "The server's Unix socket")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print GET /v1/cache as it is");
  cmd->callback([o] { print_stats(*o); });  // a DaemonError reaches main's error message
}

}  // namespace strata
