#include "engine/generate_request.h"

namespace strata {

std::string_view engine_finish_name(EngineFinish finish) {
  switch (finish) {
    case EngineFinish::kStop: return "stop";
    case EngineFinish::kLength: return "length";
    case EngineFinish::kCancelled: return "cancelled";
    case EngineFinish::kError: return "error";
  }
  return "?";
}

}  // namespace strata
