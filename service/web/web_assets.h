// The chat page's files (web/), bundled by esbuild and compiled into the binary by
// the build (embed_web_assets.mjs writes their data), so `strata serve` needs
// nothing on disk to serve the page.
//
// Immutable data: any thread.
#pragma once

#include <span>
#include <string_view>

namespace strata::web {

struct WebAsset {
  std::string_view path;       // the URL path it is served at: "/", "/app.js"
  std::string_view file_name;  // the file it came from: "index.html", "app.js"
  std::string_view etag;       // strong ETag, quoted: a hash of the body
  std::string_view body;
};

// Every embedded file.
std::span<const WebAsset> web_assets();

// The file served at `path` (a URL path without its query), or null.
const WebAsset* find_web_asset(std::string_view path);

// The Content-Type for a file name, by its extension; text types say UTF-8.
// Unknown extensions are application/octet-stream (which nosniff keeps inert).
std::string_view content_type_for(std::string_view file_name);

}  // namespace strata::web
