#include "service/server/event_channel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace strata {
namespace {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;
using Clock = std::chrono::steady_clock;

EngineEvent event_number(uint64_t i) {
  EngineEvent event;
  event.request_id = i;
  event.text = std::to_string(i);
  return event;
}

// An io_context run by `n` threads until the fixture ends.
class EventChannelTest : public ::testing::Test {
 protected:
  void start(int n_threads = 1) {
    for (int i = 0; i < n_threads; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  void TearDown() override {
    work_.reset();
    io_.stop();
    for (std::thread& thread : threads_) thread.join();
  }

  // Runs `coroutine` on `strand`; the future gets its exception, if any.
  std::future<void> spawn(asio::strand<asio::io_context::executor_type> strand,
                          asio::awaitable<void> coroutine) {
    auto done = std::make_shared<std::promise<void>>();
    std::future<void> future = done->get_future();
    asio::co_spawn(strand, std::move(coroutine), [done](std::exception_ptr e) {
      if (e) {
        done->set_exception(e);
      } else {
        done->set_value();
      }
    });
    return future;
  }

  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      asio::make_work_guard(io_)};
  std::vector<std::thread> threads_;
};

// Reads events until `count` have come; checks they are 0, 1, 2, ... and that
// next() runs on the strand.
asio::awaitable<void> consume(std::shared_ptr<EventChannel> channel,
                              asio::strand<asio::io_context::executor_type> strand,
                              uint64_t count, uint64_t* received, int64_t* batches) {
  while (*received < count) {
    std::vector<EngineEvent> events = co_await channel->next();
    EXPECT_TRUE(strand.running_in_this_thread());
    EXPECT_FALSE(events.empty()) << "next() returns at least one event when not cancelled";
    ++*batches;
    for (const EngineEvent& event : events) {
      if (event.request_id != *received) {
        ADD_FAILURE() << "event " << event.request_id << " where " << *received
                      << " was expected";
        co_return;
      }
      ++*received;
    }
  }
}

TEST_F(EventChannelTest, EventsFromAnotherThreadArriveInOrder) {
  start();
  auto strand = asio::make_strand(io_);
  auto channel = EventChannel::create(strand);
  uint64_t received = 0;
  int64_t batches = 0;
  std::future<void> done = spawn(strand, consume(channel, strand, 100, &received, &batches));
  std::thread producer([&] {
    for (uint64_t i = 0; i < 100; ++i) {
      channel->push(event_number(i));
      if (i % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  producer.join();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  done.get();
  EXPECT_EQ(received, 100u);
}

TEST_F(EventChannelTest, EventsPushedBeforeTheWaitAreReturnedAtOnce) {
  start();
  auto strand = asio::make_strand(io_);
  auto channel = EventChannel::create(strand);
  for (uint64_t i = 0; i < 5; ++i) channel->push(event_number(i));
  std::vector<EngineEvent> got;
  std::future<void> done = spawn(strand,
                                 [](std::shared_ptr<EventChannel> channel,
                                    std::vector<EngineEvent>* got) -> asio::awaitable<void> {
                                   *got = co_await channel->next();
                                 }(channel, &got));
  ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  done.get();
  ASSERT_EQ(got.size(), 5u) << "everything pushed so far, in one batch";
  for (uint64_t i = 0; i < 5; ++i) EXPECT_EQ(got[i].text, std::to_string(i));
}

// The push that comes between take() finding nothing and the wait starting
// must still wake the consumer: many pushes, each one with a good chance of
// landing in that window, and no event may be lost or reordered.
TEST_F(EventChannelTest, StressNoEventLostNorReordered) {
  start(/*n_threads=*/2);  // the strand still runs one handler at a time
  constexpr uint64_t kEvents = 100'000;
  auto strand = asio::make_strand(io_);
  auto channel = EventChannel::create(strand);
  uint64_t received = 0;
  int64_t batches = 0;
  std::future<void> done =
      spawn(strand, consume(channel, strand, kEvents, &received, &batches));
  std::thread producer([&] {
    for (uint64_t i = 0; i < kEvents; ++i) {
      channel->push(event_number(i));
      if (i % 64 == 0) std::this_thread::yield();  // let the consumer fall asleep now and then
    }
  });
  producer.join();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "the consumer is stuck after " << received << " events: a wake-up was lost";
  done.get();
  EXPECT_EQ(received, kEvents);
  EXPECT_GT(batches, 1);
}

// One event at a time, the producer waiting for the consumer each time: every
// push finds the consumer asleep (or about to be).
TEST_F(EventChannelTest, PingPongEveryPushWakesTheConsumer) {
  start(/*n_threads=*/2);
  constexpr uint64_t kRounds = 5000;
  auto strand = asio::make_strand(io_);
  auto channel = EventChannel::create(strand);
  std::atomic<uint64_t> seen{0};
  std::future<void> done = spawn(strand, [](std::shared_ptr<EventChannel> channel,
                                            std::atomic<uint64_t>* seen) -> asio::awaitable<void> {
    while (seen->load() < kRounds) {
      for (const EngineEvent& event : co_await channel->next()) {
        EXPECT_EQ(event.request_id, seen->load());
        seen->fetch_add(1);
      }
    }
  }(channel, &seen));
  for (uint64_t i = 0; i < kRounds; ++i) {
    channel->push(event_number(i));
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
    while (seen.load() <= i && Clock::now() < deadline) std::this_thread::yield();
    ASSERT_GT(seen.load(), i) << "push " << i << " never woke the consumer";
  }
  ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  done.get();
}

TEST_F(EventChannelTest, NextCancelledByATimerReturnsPromptly) {
  start();
  auto strand = asio::make_strand(io_);
  auto channel = EventChannel::create(strand);
  std::atomic<size_t> winner{99};
  Clock::duration took{};
  std::vector<EngineEvent> after;
  std::future<void> done = spawn(
      strand,
      [](std::shared_ptr<EventChannel> channel, std::atomic<size_t>* winner, Clock::duration* took,
         std::vector<EngineEvent>* after) -> asio::awaitable<void> {
        asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(50));
        const Clock::time_point start = Clock::now();
        auto race = co_await (channel->next() || timer.async_wait(asio::use_awaitable));
        *took = Clock::now() - start;
        *winner = race.index();
        // The channel still works after a cancelled next().
        *after = co_await channel->next();
      }(channel, &winner, &took, &after));
  // Wait for the race to be decided, then feed the second next().
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
  while (winner == 99 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  channel->push(event_number(7));
  ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  done.get();
  EXPECT_EQ(winner.load(), 1u) << "the timer won";
  EXPECT_LT(took, std::chrono::seconds(2));
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].request_id, 7u);
}

TEST_F(EventChannelTest, NextWinsTheRaceWhenAnEventComes) {
  start();
  auto strand = asio::make_strand(io_);
  auto channel = EventChannel::create(strand);
  std::vector<EngineEvent> got;
  size_t winner = 99;
  std::future<void> done = spawn(
      strand,
      [](std::shared_ptr<EventChannel> channel, size_t* winner,
         std::vector<EngineEvent>* got) -> asio::awaitable<void> {
        asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::seconds(30));
        auto race = co_await (channel->next() || timer.async_wait(asio::use_awaitable));
        *winner = race.index();
        if (race.index() == 0) *got = std::get<0>(std::move(race));
      }(channel, &winner, &got));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  channel->push(event_number(3));
  ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "the push did not end the race (the 30 s timer would)";
  done.get();
  EXPECT_EQ(winner, 0u);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].request_id, 3u);
}

// The engine's callback holds the channel after the connection is gone: its
// pushes must be harmless, while the io_context runs and after it stopped.
TEST_F(EventChannelTest, ChannelOutlivesItsConsumer) {
  start();
  auto strand = asio::make_strand(io_);
  auto channel = EventChannel::create(strand);
  uint64_t received = 0;
  int64_t batches = 0;
  std::future<void> done = spawn(strand, consume(channel, strand, 1, &received, &batches));
  channel->push(event_number(0));
  ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  done.get();
  // The consumer is gone; the engine thread goes on pushing.
  std::thread engine([channel] {
    for (uint64_t i = 1; i < 1000; ++i) channel->push(event_number(i));
  });
  engine.join();
  // Let the posted wake-ups run, with nobody waiting.
  std::promise<void> drained;
  asio::post(strand, [&drained] { drained.set_value(); });
  ASSERT_EQ(drained.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  channel->push(event_number(1000));
  channel.reset();  // the posted wake-up may still hold it: fine either way
}

// The last reference to a channel may be a wake-up still queued when the
// io_context goes away.
TEST(EventChannelLifetimeTest, LastReferenceInAWakeUpQueuedAtShutdown) {
  auto io = std::make_unique<asio::io_context>();
  {
    // (A strand must not outlive its io_context: keep it in here.)
    auto channel = EventChannel::create(asio::make_strand(*io));
    channel->push(event_number(1));  // posts a wake-up holding the channel
  }  // only the queued wake-up holds it now; io never runs
  io.reset();  // destroys the wake-up, and with it the channel
}

TEST(EventChannelLifetimeTest, PushAfterTheIoContextStopped) {
  asio::io_context io;
  auto strand = asio::make_strand(io);
  auto channel = EventChannel::create(strand);
  io.stop();
  for (uint64_t i = 0; i < 10; ++i) channel->push(event_number(i));
  io.restart();
  io.poll();  // the wake-up runs with no consumer
  channel->push(event_number(10));
  channel.reset();
}

}  // namespace
}  // namespace strata
