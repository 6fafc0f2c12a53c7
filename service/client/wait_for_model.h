// wait_for_model: what a command does before its first request to `strata serve`. The
// server answers HTTP before its model is loaded: GET /health says 503 {"status":
// "loading"} until then (a large model takes a while to read).
//
// On the thread that uses the client.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "service/client/daemon_client.h"

namespace strata {

// How often /health is asked while the model loads.
inline constexpr std::chrono::milliseconds kModelPollInterval{250};

// Returns the served model's id (from GET /v1/models) once /health answers 200. While
// it answers "loading", calls on_loading once and asks again every kModelPollInterval.
// Throws DaemonError when the server is not there, failed to load its model, or
// answers anything else.
std::string wait_for_model(DaemonClient& client, const std::function<void()>& on_loading);

}  // namespace strata
