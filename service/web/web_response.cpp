#include "service/web/web_response.h"

#include <string>

namespace strata::web {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string_view without_weak_prefix(std::string_view tag) {
  return tag.starts_with("W/") ? tag.substr(2) : tag;
}

void set_security_headers(http::Response& response) {
  response.set("Content-Security-Policy", kContentSecurityPolicy);
  response.set("X-Content-Type-Options", "nosniff");
  response.set(http::bhttp::field::x_frame_options, "DENY");
  response.set("Referrer-Policy", "no-referrer");
  response.set("Cross-Origin-Opener-Policy", "same-origin");
  response.set("Cross-Origin-Resource-Policy", "same-origin");
}

}  // namespace

bool etag_matches(std::string_view if_none_match, std::string_view etag) {
  while (!if_none_match.empty()) {
    const size_t comma = if_none_match.find(',');
    const std::string_view tag = trim(if_none_match.substr(0, comma));
    if (tag == "*" || (!tag.empty() && without_weak_prefix(tag) == without_weak_prefix(etag))) {
      return true;
    }
    if (comma == std::string_view::npos) break;
    if_none_match.remove_prefix(comma + 1);
  }
  return false;
}

http::Response web_asset_response(const WebAsset& asset, const http::Request& request) {
  const bool fresh = etag_matches(request[http::bhttp::field::if_none_match], asset.etag);
  http::Response response{fresh ? http::Status::not_modified : http::Status::ok, request.version()};
  response.set(http::bhttp::field::etag, asset.etag);
  response.set(http::bhttp::field::cache_control, "no-cache");
  set_security_headers(response);
  if (!fresh) {
    response.set(http::bhttp::field::content_type, content_type_for(asset.file_name));
    response.body() = std::string(asset.body);
  }
  return response;
}

}  // namespace strata::web
