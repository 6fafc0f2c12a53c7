// AccessPolicy: who may use the API over TCP, decided per request from three headers.
// The Unix socket is guarded by its file permissions and skips these checks.
//
//   Host           must name this machine's loopback interface (or an allowed name), so
//                  a web page whose DNS name is re-pointed at 127.0.0.1 (DNS rebinding)
//                  is refused: its requests carry its own name in Host.
//   Authorization  "Bearer <api key>" when a key is configured.
//   Origin         decides the CORS headers, which let browser pages on other origins
//                  read responses; by default none may.
//
// The Host check suits a server bound to loopback. Bound elsewhere, clients on other
// machines send that machine's name or address: list them in allowed_hosts (the API key
// is what protects such a server).
//
// Pure functions on plain data: any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::http {

struct AccessPolicy {
  std::vector<std::string> allowed_hosts{};  // names accepted in Host besides loopback, any port
  std::vector<std::string> cors_origins{};   // exact origins ("http://localhost:3000"), or "*"
  std::string api_key{};                     // "" when none is required
};

// Whether the Host header names a loopback address — localhost, 127.x.y.z (dotted quad)
// or [::1] — or an allowed name, with or without :port. Names compare case-insensitively
// and may end in a dot ("localhost."). Empty, malformed ("evil.com:127.0.0.1") and other
// spellings of loopback addresses ("127.1", "0x7f.0.0.1") are refused.
bool host_allowed(const AccessPolicy& policy, std::string_view host_header);

// Whether the request may proceed: always when no api_key is configured (OpenAI clients
// send a Bearer token whether or not one is needed); otherwise the header must be
// exactly "Bearer <api_key>", the scheme in any case, one space, nothing after the key —
// or, as Anthropic's clients send it, the x-api-key header exactly "<api_key>". The key
// is compared in time that depends only on the header's length.
bool authorized(const AccessPolicy& policy, std::string_view authorization_header,
                std::string_view x_api_key_header = {});

// The Access-Control-Allow-Origin value for a request with this Origin header, or
// nullopt to send no CORS headers: the origin itself when it is configured exactly, "*"
// when "*" is configured, nothing for an empty Origin. The caller sends Vary: Origin
// whenever the answer depends on the Origin.
std::optional<std::string> cors_allow_origin(const AccessPolicy& policy,
                                             std::string_view origin_header);

}  // namespace strata::http
