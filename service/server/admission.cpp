#include "service/server/admission.h"

namespace strata {

std::optional<Admission::Ticket> Admission::try_admit() {
  int64_t active = n_active_.load(std::memory_order_relaxed);
  do {
    if (active >= max_active_) return std::nullopt;
  } while (!n_active_.compare_exchange_weak(active, active + 1, std::memory_order_relaxed));
  return Ticket(this);
}

}  // namespace strata
