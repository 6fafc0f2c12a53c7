#include "service/server/admission.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace strata {
namespace {

TEST(AdmissionTest, MaxActiveTicketsThenNone) {
  Admission admission(3);
  EXPECT_EQ(admission.max_active(), 3);
  EXPECT_EQ(admission.n_active(), 0);
  std::vector<Admission::Ticket> tickets;
  for (int i = 0; i < 3; ++i) {
    std::optional<Admission::Ticket> ticket = admission.try_admit();
    ASSERT_TRUE(ticket.has_value()) << i;
    tickets.push_back(std::move(*ticket));
    EXPECT_EQ(admission.n_active(), i + 1);
  }
  EXPECT_FALSE(admission.try_admit().has_value());
  EXPECT_FALSE(admission.try_admit().has_value()) << "a refusal takes no place";
  EXPECT_EQ(admission.n_active(), 3);
  tickets.clear();
  EXPECT_EQ(admission.n_active(), 0);
}

TEST(AdmissionTest, DestroyedTicketFreesAPlace) {
  Admission admission(1);
  {
    std::optional<Admission::Ticket> held = admission.try_admit();
    ASSERT_TRUE(held);
    EXPECT_FALSE(admission.try_admit());
  }
  EXPECT_EQ(admission.n_active(), 0);
  std::optional<Admission::Ticket> again = admission.try_admit();
  EXPECT_TRUE(again);
  again.reset();
  EXPECT_EQ(admission.n_active(), 0);
}

TEST(AdmissionTest, MovedTicketFreesOnce) {
  Admission admission(2);
  std::optional<Admission::Ticket> first = admission.try_admit();
  ASSERT_TRUE(first);
  {
    Admission::Ticket moved(std::move(*first));
    first.reset();  // the moved-from ticket gives nothing back
    EXPECT_EQ(admission.n_active(), 1);
    Admission::Ticket moved_again(std::move(moved));
    EXPECT_EQ(admission.n_active(), 1);
  }  // both destroyed: only one gives the place back
  EXPECT_EQ(admission.n_active(), 0);
  // Moves inside containers (reallocation) also keep the count.
  {
    std::vector<Admission::Ticket> tickets;
    for (int i = 0; i < 2; ++i) tickets.push_back(std::move(*admission.try_admit()));
    EXPECT_EQ(admission.n_active(), 2);
    EXPECT_FALSE(admission.try_admit());
  }
  EXPECT_EQ(admission.n_active(), 0);
}

TEST(AdmissionTest, ConcurrentAdmissionNeverExceedsTheMax) {
  constexpr int kMax = 3;
  constexpr int kThreads = 8;
  constexpr int kRounds = 20000;
  Admission admission(kMax);
  std::atomic<int> holding{0};
  std::atomic<int> most{0};
  std::atomic<int64_t> admitted{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < kRounds; ++i) {
        std::optional<Admission::Ticket> ticket = admission.try_admit();
        if (!ticket) continue;
        admitted.fetch_add(1);
        const int now = holding.fetch_add(1) + 1;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        if (i % 7 == 0) std::this_thread::yield();  // hold it a while, sometimes
        holding.fetch_sub(1);
      }
    });
  }
  go.store(true);
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(most.load(), kMax);
  EXPECT_GT(admitted.load(), 0);
  EXPECT_EQ(admission.n_active(), 0) << "every place was given back";
  // And all of them can be taken again.
  std::vector<Admission::Ticket> tickets;
  for (int i = 0; i < kMax; ++i) {
    auto ticket = admission.try_admit();
    ASSERT_TRUE(ticket);
    tickets.push_back(std::move(*ticket));
  }
  EXPECT_FALSE(admission.try_admit());
}

}  // namespace
}  // namespace strata
