#include "service/server/event_channel.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <utility>

namespace strata {

namespace asio = boost::asio;

std::shared_ptr<EventChannel> EventChannel::create(asio::any_io_executor strand) {
  return std::shared_ptr<EventChannel>(new EventChannel(std::move(strand)));
}

EventChannel::EventChannel(asio::any_io_executor strand)
    : strand_(strand), wake_(strand, asio::steady_timer::time_point::max()) {}

void EventChannel::push(EngineEvent event) {
  {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(event));
    if (wake_posted_) return;
    wake_posted_ = true;
  }
  asio::post(strand_, [self = shared_from_this()] {
    {
      std::lock_guard lock(self->mutex_);
      self->wake_posted_ = false;
    }
    self->wake_.cancel();
  });
}

std::vector<EngineEvent> EventChannel::take() {
  std::lock_guard lock(mutex_);
  std::vector<EngineEvent> out(std::make_move_iterator(events_.begin()),
                               std::make_move_iterator(events_.end()));
  events_.clear();
  return out;
}

asio::awaitable<std::vector<EngineEvent>> EventChannel::next() {
  for (;;) {
    std::vector<EngineEvent> events = take();
    if (!events.empty()) co_return events;
    // No suspension between take() and the wait starting: a wake-up posted
    // after take() runs on this strand only once the wait is pending.
    wake_.expires_at(asio::steady_timer::time_point::max());
    auto [error] = co_await wake_.async_wait(asio::as_tuple(asio::use_awaitable));
    if (error != asio::error::operation_aborted) continue;
    const asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
    if (state.cancelled() != asio::cancellation_type::none) co_return take();
  }
}

}  // namespace strata
