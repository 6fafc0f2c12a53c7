// strata devices [--json]: the GPUs this build can run on, or why none.
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "gpu/gpu_devices.h"
#include "service/cli/commands.h"

namespace strata {
namespace {

nlohmann::ordered_json probe_json(const GpuProbe& probe) {
  nlohmann::ordered_json out;
  out["cuda_built"] = probe.cuda_built;
  out["driver_version"] = probe.driver_version;
  out["runtime_version"] = probe.runtime_version;
  out["devices"] = nlohmann::json::array();
  for (const GpuDevice& d : probe.devices) {
    out["devices"].push_back({{"index", d.index},
                              {"name", d.name},
                              {"compute_capability", std::to_string(d.compute_major) + "." +
                                                         std::to_string(d.compute_minor)},
                              {"memory_bytes", d.memory_bytes},
                              {"multiprocessors", d.multiprocessors}});
  }
  if (probe.devices.empty()) out["unavailable_reason"] = probe.unavailable_reason;
  return out;
}

}  // namespace

void add_devices_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("devices", "List the GPUs Strata can use");
  cmd->add_flag("--json", *json, "Print one JSON object");
  cmd->callback([json] {
    GpuProbe probe = probe_gpus();
    if (*json) {
      std::cout << probe_json(probe).dump(2) << "\n";
      return;
    }
    if (probe.devices.empty()) {
      std::cout << "no GPU: " << probe.unavailable_reason << " (the CPU backend serves)\n";
      return;
    }
    for (const GpuDevice& d : probe.devices) {
      std::cout << "cuda:" << d.index << "  " << d.name << "  sm_" << d.compute_major
                << d.compute_minor << "  " << d.memory_bytes / (1024 * 1024) << " MiB  "
                << d.multiprocessors << " SMs\n";
    }
  });
}

}  // namespace strata
