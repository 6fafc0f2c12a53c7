// Admission: how many generation requests the server holds at once (running
// in the engine, waiting for it, or being tokenized). A request beyond the
// limit is refused with 429 before any costly work — before its body is even
// parsed — so a flood cannot pile up tokenization and memory.
//
// Threads: any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

namespace strata {

class Admission {
 public:
  // A held place; the place is given back when the ticket is destroyed.
  class Ticket {
   public:
    Ticket(Ticket&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
    Ticket& operator=(Ticket&&) = delete;
    Ticket(const Ticket&) = delete;
    ~Ticket() {
      if (owner_ != nullptr) owner_->n_active_.fetch_sub(1, std::memory_order_relaxed);
    }

   private:
    friend class Admission;
    explicit Ticket(Admission* owner) : owner_(owner) {}
    Admission* owner_;
  };

  // `max_active`: running plus waiting requests, >= 1.
  explicit Admission(int64_t max_active) : max_active_(max_active) {}

  // A place, or nullopt when all are taken.
  std::optional<Ticket> try_admit();
  int64_t n_active() const { return n_active_.load(std::memory_order_relaxed); }
  int64_t max_active() const { return max_active_; }

 private:
  const int64_t max_active_;
  std::atomic<int64_t> n_active_{0};
};

}  // namespace strata
