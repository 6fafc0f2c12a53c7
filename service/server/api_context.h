// ApiContext: what every endpoint handler shares — the model, the limits and
// the server's bookkeeping. Built once by `strata serve`; outlives the server.
//
// Threads: the members are themselves safe to use from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "service/http/access_policy.h"
#include "service/metrics/service_metrics.h"
#include "service/server/active_requests.h"
#include "service/server/admission.h"
#include "service/server/model_host.h"

namespace strata {

struct ApiContext {
  std::string model_id;                  // the name in /v1/models and in responses
  std::vector<std::string> model_names;  // accepted as a request's "model" (model_id first)
  int64_t started_at = 0;                // unix seconds: the model's "created"
  ModelHost& model_host;
  metrics::ServiceMetrics& metrics;
  Admission& admission;
  ActiveRequests& active;
  http::AccessPolicy access;
  // The Host check (DNS rebinding) guards a loopback bind. Bound elsewhere,
  // remote clients name this machine as they please, and the API key (then
  // required) is the guard.
  bool check_host = true;
};

}  // namespace strata
