#include "service/web/web_assets.h"

#include <array>
#include <utility>

namespace strata::web {

const WebAsset* find_web_asset(std::string_view path) {
  for (const WebAsset& asset : web_assets()) {
    if (asset.path == path) return &asset;
  }
  return nullptr;
}

std::string_view content_type_for(std::string_view file_name) {
  constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kTypes = {{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".json", "application/json"},
      {".txt", "text/plain; charset=utf-8"},
      {".woff2", "font/woff2"},
  }};
  for (const auto& [extension, type] : kTypes) {
    if (file_name.ends_with(extension)) return type;
  }
  return "application/octet-stream";
}

}  // namespace strata::web
