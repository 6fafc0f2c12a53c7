#include "engine/generate_request.h"

namespace strata {

std::string_view finish_reason_name(FinishReason finish) {
  switch (finish) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCancelled: return "cancelled";
    case FinishReason::kError: return "error";
  }
  return "?";
}

}  // namespace strata
