// ActiveRequests: the engine ids of the generations the server is answering,
// so a shutdown whose grace period ran out can cancel the ones still going.
//
// Threads: any thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>

#include "engine/engine.h"

namespace strata {

class ActiveRequests {
 public:
  // Registered for the guard's lifetime.
  class Guard {
   public:
    Guard(ActiveRequests& owner, uint64_t id) : owner_(owner), id_(id) { owner_.add(id_); }
    ~Guard() { owner_.remove(id_); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    ActiveRequests& owner_;
    uint64_t id_;
  };

  void cancel_all(Engine& engine) const;
  int64_t size() const;

 private:
  void add(uint64_t id);
  void remove(uint64_t id);

  mutable std::mutex mutex_;
  std::set<uint64_t> ids_;
};

}  // namespace strata
