#include "service/server/active_requests.h"

namespace strata {

void ActiveRequests::add(uint64_t id) {
  std::lock_guard lock(mutex_);
  ids_.insert(id);
}

void ActiveRequests::remove(uint64_t id) {
  std::lock_guard lock(mutex_);
  ids_.erase(id);
}

void ActiveRequests::cancel_all(Engine& engine) const {
  std::lock_guard lock(mutex_);
  for (uint64_t id : ids_) engine.cancel(id);
}

int64_t ActiveRequests::size() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(ids_.size());
}

}  // namespace strata
