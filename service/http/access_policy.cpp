#include "service/http/access_policy.h"

#include <algorithm>

#include "service/config/serve_settings.h"

namespace strata::http {
namespace {

char to_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return to_lower(x) == to_lower(y);
         });
}

// The host of a Host header value (RFC 9110 7.2: host [":" port]), lower case, without
// the port and without one trailing dot; nullopt when it is not a well-formed host. An
// IPv6 address keeps its brackets. Only the characters of DNS names and IP literals pass,
// so nothing else (NUL, spaces, '@', '%') reaches the comparisons.
std::optional<std::string> host_of(std::string_view header) {
  std::string_view host;
  std::string_view port;
  if (header.starts_with('[')) {
    size_t close = header.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = header.substr(0, close + 1);
    bool ipv6_chars = std::all_of(host.begin() + 1, host.end() - 1, [](char c) {
      return is_digit(c) || (to_lower(c) >= 'a' && to_lower(c) <= 'f') || c == ':' || c == '.';
    });
    if (!ipv6_chars) return std::nullopt;
    port = header.substr(close + 1);
  } else {
    size_t colon = header.find(':');
    host = header.substr(0, colon);
    port = colon == std::string_view::npos ? std::string_view() : header.substr(colon);
    bool name_chars = std::all_of(host.begin(), host.end(), [](char c) {
      return is_digit(c) || (to_lower(c) >= 'a' && to_lower(c) <= 'z') || c == '.' || c == '-' ||
             c == '_';
    });
    if (!name_chars) return std::nullopt;
    if (host.size() > 1 && host.ends_with('.')) host.remove_suffix(1);
  }
  if (host.empty() || host == ".") return std::nullopt;
  // ":" alone is an empty port, which RFC 3986 allows; ":65535" is the longest.
  bool port_ok = port.empty() || (port.front() == ':' && port.size() <= 6 &&
                                  std::all_of(port.begin() + 1, port.end(), is_digit));
  if (!port_ok) return std::nullopt;

  std::string out(host);
  std::transform(out.begin(), out.end(), out.begin(), to_lower);
  return out;
}

// Equal strings, in time that depends on `given`'s length only, not on where the first
// difference is. `expected` is not empty.
bool constant_time_equals(std::string_view given, std::string_view expected) {
  unsigned difference = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i) {
    difference |= static_cast<unsigned char>(given[i] ^ expected[i % expected.size()]);
  }
  return difference == 0;
}

}  // namespace

bool host_allowed(const AccessPolicy& policy, std::string_view host_header) {
  std::optional<std::string> host = host_of(host_header);
  if (!host) return false;
  if (is_loopback_host(*host)) return true;
  return std::any_of(policy.allowed_hosts.begin(), policy.allowed_hosts.end(),
                     [&host](const std::string& allowed) { return host_of(allowed) == host; });
}

bool authorized(const AccessPolicy& policy, std::string_view authorization_header,
                std::string_view x_api_key_header) {
  if (policy.api_key.empty()) return true;
  if (!x_api_key_header.empty() && constant_time_equals(x_api_key_header, policy.api_key)) {
    return true;
  }
  constexpr std::string_view kScheme = "bearer ";
  if (!iequals(authorization_header.substr(0, kScheme.size()), kScheme)) return false;
  return constant_time_equals(authorization_header.substr(kScheme.size()), policy.api_key);
}

std::optional<std::string> cors_allow_origin(const AccessPolicy& policy,
                                             std::string_view origin_header) {
  if (origin_header.empty()) return std::nullopt;
  for (const std::string& origin : policy.cors_origins) {
    if (origin == "*") return origin;
  }
  for (const std::string& origin : policy.cors_origins) {
    if (origin == origin_header) return origin;
  }
  return std::nullopt;
}

}  // namespace strata::http
