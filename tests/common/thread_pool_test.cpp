#include "common/thread_pool.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace strata {
namespace {

// Runs parallel_for and returns how many times each task ran.
std::vector<int> run_counts(ThreadPool& pool, int64_t n_tasks) {
  std::vector<std::atomic<int>> counts(static_cast<size_t>(n_tasks));
  pool.parallel_for(n_tasks, [&](int64_t task) {
    counts[static_cast<size_t>(task)].fetch_add(1, std::memory_order_relaxed);
  });
  std::vector<int> out;
  for (const auto& count : counts) out.push_back(count.load());
  return out;
}

TEST(ThreadPoolTest, EveryTaskRunsExactlyOnce) {
  for (int n_threads : {1, 2, 3, 4, 8}) {
    ThreadPool pool(n_threads);
    EXPECT_EQ(pool.n_threads(), n_threads);
    for (int64_t n_tasks : {0, 1, 2, 3, 7, 8, 9, 100, 10007}) {
      const std::vector<int> counts = run_counts(pool, n_tasks);
      for (int64_t task = 0; task < n_tasks; ++task) {
        ASSERT_EQ(counts[static_cast<size_t>(task)], 1)
            << "task " << task << " of " << n_tasks << ", " << n_threads << " threads";
      }
    }
  }
}

TEST(ThreadPoolTest, FewerTasksThanThreads) {
  ThreadPool pool(8);
  for (int64_t n_tasks = 1; n_tasks < 8; ++n_tasks) {
    const std::vector<int> counts = run_counts(pool, n_tasks);
    for (int count : counts) EXPECT_EQ(count, 1);
  }
}

// A few microseconds of work, so that workers join jobs instead of the
// caller finishing every task before they wake.
uint64_t busy_value(uint64_t seed) {
  volatile uint64_t value = seed;  // unsigned: wraps instead of overflowing
  for (uint64_t i = 0; i < 500; ++i) value = value * 31 + i;
  return value;
}

// Thousands of back-to-back jobs: catches lost wake-ups and a job's tasks
// leaking into the next one. Plain (non-atomic) writes check that results
// are visible to the caller when parallel_for returns.
TEST(ThreadPoolTest, ManyBackToBackCalls) {
  ThreadPool pool(4);
  std::vector<uint64_t> out(64);
  for (uint64_t call = 0; call < 5000; ++call) {
    const auto n_tasks = static_cast<int64_t>(1 + call % 64);
    pool.parallel_for(n_tasks, [&](int64_t task) {
      const auto t = static_cast<uint64_t>(task);
      out[t] = busy_value(call * 1000 + t);
    });
    for (uint64_t t = 0; t < static_cast<uint64_t>(n_tasks); ++t) {
      ASSERT_EQ(out[t], busy_value(call * 1000 + t)) << "call " << call;
    }
  }
}

// Pauses between calls longer than the workers' spin, so they go to sleep on
// the futex and must be woken (the other test keeps them spinning).
TEST(ThreadPoolTest, WakesSleepingWorkers) {
  ThreadPool pool(3);
  for (int call = 0; call < 50; ++call) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const std::vector<int> counts = run_counts(pool, 16);
    for (int count : counts) ASSERT_EQ(count, 1);
  }
}

// All threads run at once: each task waits until every task has started,
// which can only finish if n_threads distinct threads are running tasks.
TEST(ThreadPoolTest, AllThreadsTakePart) {
  for (int n_threads : {2, 3, 4}) {
    ThreadPool pool(n_threads);
    std::atomic<int> n_started{0};
    std::atomic<bool> timed_out{false};
    std::mutex mutex;
    std::set<std::thread::id> threads;
    pool.parallel_for(n_threads, [&](int64_t) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        threads.insert(std::this_thread::get_id());
      }
      n_started.fetch_add(1);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (n_started.load() < n_threads) {
        if (std::chrono::steady_clock::now() > deadline) {
          timed_out = true;
          return;
        }
        std::this_thread::yield();
      }
    });
    EXPECT_FALSE(timed_out.load()) << n_threads << " threads";
    EXPECT_EQ(threads.size(), static_cast<size_t>(n_threads));
  }
}

TEST(ThreadPoolTest, OneThreadRunsEverythingOnTheCaller) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.n_threads(), 1);
  const std::thread::id caller = std::this_thread::get_id();
  int n_run = 0;  // no atomics needed: one thread
  pool.parallel_for(100, [&](int64_t) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    ++n_run;
  });
  EXPECT_EQ(n_run, 100);
}

TEST(ThreadPoolTest, DefaultSizeIsTheAffinityMask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  ThreadPool pool;
  EXPECT_EQ(pool.n_threads(), CPU_COUNT(&set));
}

TEST(ThreadPoolTest, DestroysIdleAndSleepingPools) {
  { ThreadPool fresh(4); }
  {
    ThreadPool used(4);
    run_counts(used, 10);
  }
  {
    ThreadPool sleeping(4);
    run_counts(sleeping, 10);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST(ThreadPoolDeathTest, NestedCallAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        ThreadPool pool(2);
        pool.parallel_for(2, [&](int64_t) { pool.parallel_for(2, [](int64_t) {}); });
      },
      "not reentrant|another is running");
}

}  // namespace
}  // namespace strata
