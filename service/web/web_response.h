// The HTTP answer for one of the chat page's files: its bytes with their content
// type and ETag, or 304 Not Modified when the browser's copy is current; both with
// the page's security headers (a strict Content-Security-Policy among them).
//
// Pure functions: any thread.
#pragma once

#include <string_view>

#include "service/http/http_types.h"
#include "service/web/web_assets.h"

namespace strata::web {

// The page runs only its own script and style, talks only to this server, loads
// images only from it (and data: URLs), and may not be framed, have its base URL
// changed or submit forms anywhere. No inline script, no remote origin.
inline constexpr std::string_view kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// Whether an If-None-Match header names `etag` (weak comparison, RFC 9110 13.1.2:
// W/ prefixes ignored; a list; "*" matches any).
bool etag_matches(std::string_view if_none_match, std::string_view etag);

// The answer to GET `asset.path` for `request` (its If-None-Match and version).
// Cache-Control no-cache: browsers keep the files but check the ETag before each
// use, so a new strata binary's page is never mixed with an old one's script.
http::Response web_asset_response(const WebAsset& asset, const http::Request& request);

}  // namespace strata::web
