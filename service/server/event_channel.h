// EventChannel: carries one request's EngineEvents from the engine thread to
// the connection that waits for them. The engine's callback must never block,
// so push() only queues the event and, when the connection may be asleep,
// posts a wake-up onto the connection's strand.
//
// Threads: push() on any thread (the engine thread); next() from one
// coroutine on the strand given at construction. Hold it by shared_ptr: the
// engine's callback may outlive the connection.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include "engine/generate_request.h"

namespace strata {

class EventChannel : public std::enable_shared_from_this<EventChannel> {
 public:
  // `strand`: the executor of the coroutine that will call next().
  static std::shared_ptr<EventChannel> create(boost::asio::any_io_executor strand);

  void push(EngineEvent event);
  // Every event pushed since the last call, waiting until there is one.
  // Cancellable (asio's `||`): then it returns what it has, maybe nothing.
  boost::asio::awaitable<std::vector<EngineEvent>> next();

 private:
  explicit EventChannel(boost::asio::any_io_executor strand);
  std::vector<EngineEvent> take();

  boost::asio::any_io_executor strand_;
  boost::asio::steady_timer wake_;  // strand only: next() sleeps on it, push() cancels it

  std::mutex mutex_;
  std::deque<EngineEvent> events_;  // under mutex_
  bool wake_posted_ = false;        // under mutex_: a cancel of wake_ is on its way
};

}  // namespace strata
