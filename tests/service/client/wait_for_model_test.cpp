// wait_for_model against a scripted server: loading, then ready; a model that failed to
// load; a server that lists no model.
#include "service/client/wait_for_model.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "tests/service/client/scripted_server.h"

namespace strata {
namespace {

using testing::json_response;
using testing::Request;
using testing::ScriptedServer;
using testing::Socket;
using testing::write_raw;

const std::string kModels = R"({"object": "list", "data": [{"id": "tiny", "object": "model"}]})";

// /health says `health_status` (503) `n_loading` times, then "ok"; /v1/models lists `models`.
ScriptedServer::Handler server(std::atomic<int>& n_health, int n_loading,
                               const std::string& health_status, const std::string& models) {
  return [&n_health, n_loading, health_status, models](const Request& request, Socket& socket) {
    if (request.target() == "/health") {
      bool ready = n_health++ >= n_loading;
      write_raw(socket, ready ? json_response(200, "OK", R"({"status": "ok"})")
                              : json_response(503, "Service Unavailable",
                                              R"({"status": ")" + health_status + "\"}"));
    } else {
      write_raw(socket, json_response(200, "OK", models));
    }
    return true;
  };
}

TEST(WaitForModelTest, SaysOnceThatItWaitsThenGivesTheModelsId) {
  std::atomic<int> n_health{0};
  ScriptedServer scripted(server(n_health, 3, "loading", kModels));
  DaemonClient client(scripted.path());
  int n_told = 0;
  EXPECT_EQ(wait_for_model(client, [&] { ++n_told; }), "tiny");
  EXPECT_EQ(n_told, 1);
  EXPECT_EQ(n_health, 4);
}

TEST(WaitForModelTest, ReadyAtOnceSaysNothing) {
  std::atomic<int> n_health{0};
  ScriptedServer scripted(server(n_health, 0, "loading", kModels));
  DaemonClient client(scripted.path());
  int n_told = 0;
  EXPECT_EQ(wait_for_model(client, [&] { ++n_told; }), "tiny");
  EXPECT_EQ(n_told, 0);
}

TEST(WaitForModelTest, AModelThatFailedToLoadIsAnError) {
  std::atomic<int> n_health{0};
  ScriptedServer scripted(server(n_health, 1000, "failed", kModels));
  DaemonClient client(scripted.path());
  try {
    wait_for_model(client, [] {});
    FAIL() << "no DaemonError";
  } catch (const DaemonError& e) {
    EXPECT_NE(std::string(e.what()).find("could not load its model"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.http_status(), 503);
  }
  EXPECT_EQ(n_health, 1);
}

TEST(WaitForModelTest, NoModelListedIsAnError) {
  std::atomic<int> n_health{0};
  ScriptedServer scripted(server(n_health, 0, "loading", R"({"object": "list", "data": []})"));
  DaemonClient client(scripted.path());
  EXPECT_THROW(wait_for_model(client, [] {}), DaemonError);
}

}  // namespace
}  // namespace strata
