// str_cat: build a std::string from anything that streams (libstdc++ 12 has no
// std::format). Used for error and log messages, never on hot paths.
#pragma once

#include <sstream>
#include <string>

namespace strata {

template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

}  // namespace strata
