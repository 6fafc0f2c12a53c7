#include "service/client/wait_for_model.h"

#include <thread>

#include "common/str_cat.h"

namespace strata {
namespace {

// The "status" of a /health answer that is not 200 ("loading", "failed"), or "".
std::string health_status(const DaemonError& e) {
  const nlohmann::json& body = e.body();
  if (e.http_status() != 503 || !body.is_object() || !body.contains("status")) return "";
  return body["status"].is_string() ? body["status"].get<std::string>() : "";
}

std::string model_id(DaemonClient& client) {
  nlohmann::json models = client.get_json("/v1/models");
  if (!models.contains("data") || !models["data"].is_array() || models["data"].empty() ||
      !models["data"][0].contains("id") || !models["data"][0]["id"].is_string()) {
    throw DaemonError(str_cat("strata at ", client.socket_path(),
                              " lists no model in GET /v1/models: ", models.dump()),
                      200, models);
  }
  return models["data"][0]["id"].get<std::string>();
}

}  // namespace

std::string wait_for_model(DaemonClient& client, const std::function<void()>& on_loading) {
  for (bool told = false;; told = true) {
    try {
      client.get_json("/health");
      return model_id(client);
    } catch (const DaemonError& e) {
      const std::string status = health_status(e);
      if (status == "failed") {
        throw DaemonError(str_cat("strata at ", client.socket_path(),
                                  " could not load its model: its log says why"),
                          e.http_status(), e.body());
      }
      if (status != "loading") throw;
    }
    if (!told) on_loading();
    std::this_thread::sleep_for(kModelPollInterval);
  }
}

}  // namespace strata
