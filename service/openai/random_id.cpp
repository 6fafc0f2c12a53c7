#include "service/openai/random_id.h"

#include <cstdio>
#include <random>

namespace strata::openai {

std::string random_id(std::string_view prefix) {
  std::random_device random;
  char hex[25];
  std::snprintf(hex, sizeof hex, "%08x%08x%08x", random(), random(), random());
  std::string id(prefix);
  id += hex;
  return id;
}

}  // namespace strata::openai
