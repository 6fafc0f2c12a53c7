// ThreadPool: generation counter + bounded spin + futex sleep (see the header).
//
// One parallel_for (caller C, workers W):
//   C: write job_fn_ / job_n_tasks_, next_task_ = 0, open the job
//      (job_state_ = 0: open, nobody joined), generation_ += 1, wake sleepers;
//      run tasks itself until none is left to claim; close the job
//      (job_state_ |= kJobClosed); wait until the joined workers have left.
//   W: sees generation_ change; joins if the job is still open (CAS on
//      job_state_); runs tasks until none is left; leaves (job_state_ -= 1),
//      waking C if it was the last one and C sleeps.
// Every claimed task belongs to a joined worker or to C, so when C has closed
// the job and the joined count is 0, every task has finished. A worker that
// wakes after the close does not join and costs C nothing. The job fields are
// stable while a worker is joined: C rewrites them only after the count is 0
// and the job closed, and publishes them with the release that opens the job.
//
// Sleeping without lost wake-ups: a sleeper first announces itself
// (n_workers_sleeping_ / caller_sleeping_, seq_cst), then futex-waits on the
// word it watches with the value it last saw; the waker changes the word first
// (seq_cst), then reads the announcement. Either the waker sees the sleeper and
// wakes it, or the futex sees the changed word and does not sleep.
#include "common/thread_pool.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <string>

#include "common/check.h"

namespace strata {
namespace {

// How long a thread polls before it sleeps. Workers: a decode step calls
// parallel_for again within microseconds, and a futex wake-up costs tens to
// hundreds of microseconds, so a short spin keeps dispatch cheap while an
// idle pool still goes quiet almost at once. The caller waits only for
// workers that are running its tasks, so it spins longer.
constexpr std::chrono::microseconds kWorkerSpin{50};
constexpr std::chrono::microseconds kCallerSpin{200};

// job_state_: this bit set = closed; the low bits count joined workers.
constexpr uint32_t kJobClosed = 1u << 31;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Sleeps while *word == expected (returns at once if it already differs; may
// return spuriously, so callers loop).
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                std::atomic<uint32_t>::is_always_lock_free);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}

// Polls done() until it is true or `budget` has passed; returns done().
template <typename Done>
bool spin_until(Done done, std::chrono::microseconds budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (;;) {
    // Read the clock only every few polls: it costs more than a poll.
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

int cpus_in_affinity_mask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) : job_state_(kJobClosed) {
  if (n_threads <= 0) n_threads = cpus_in_affinity_mask();
  workers_.reserve(static_cast<size_t>(n_threads - 1));
  for (int i = 1; i < n_threads; ++i) {
    workers_.emplace_back([this] { worker_loop(); });
    // Named for top/perf; at most 15 characters. Failure is harmless.
    pthread_setname_np(workers_.back().native_handle(),
                       ("strata-pool-" + std::to_string(i)).c_str());
  }
}

ThreadPool::~ThreadPool() {
  STRATA_CHECK(!in_parallel_for_.load(), "ThreadPool destroyed during parallel_for");
  stopping_.store(true, std::memory_order_relaxed);  // ordered by the bump below
  generation_.fetch_add(1, std::memory_order_seq_cst);
  futex_wake_all(generation_);
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::parallel_for(int64_t n_tasks, const std::function<void(int64_t task)>& fn) {
  STRATA_CHECK(!in_parallel_for_.exchange(true, std::memory_order_acquire),
               "ThreadPool::parallel_for called while another is running (nested or concurrent)");
  if (workers_.empty() || n_tasks <= 1) {
    // Nothing to share: waking workers would only add latency.
    for (int64_t task = 0; task < n_tasks; ++task) fn(task);
    in_parallel_for_.store(false, std::memory_order_release);
    return;
  }

  job_fn_ = &fn;
  job_n_tasks_ = n_tasks;
  next_task_.store(0, std::memory_order_relaxed);
  job_state_.store(0, std::memory_order_release);       // open; publishes the job
  generation_.fetch_add(1, std::memory_order_seq_cst);  // tells workers to look
  if (n_workers_sleeping_.load(std::memory_order_seq_cst) > 0) futex_wake_all(generation_);

  run_tasks();

  // Every task is claimed; close the job and wait for the joined workers.
  const uint32_t state = job_state_.fetch_or(kJobClosed, std::memory_order_acq_rel);
  if (state != 0) {
    auto workers_left = [this] {
      return job_state_.load(std::memory_order_acquire) == kJobClosed;
    };
    if (!spin_until(workers_left, kCallerSpin)) {
      caller_sleeping_.store(true, std::memory_order_seq_cst);
      for (uint32_t now; (now = job_state_.load(std::memory_order_seq_cst)) != kJobClosed;) {
        futex_wait(job_state_, now);
      }
      caller_sleeping_.store(false, std::memory_order_relaxed);
    }
  }
  // Both waits end on an acquire load that reads the last leaving worker's
  // release, so everything the tasks wrote is visible here.
  job_fn_ = nullptr;
  in_parallel_for_.store(false, std::memory_order_release);
}

void ThreadPool::run_tasks() {
  for (;;) {
    const int64_t task = next_task_.fetch_add(1, std::memory_order_relaxed);
    if (task >= job_n_tasks_) return;
    (*job_fn_)(task);
  }
}

bool ThreadPool::try_join_job() {
  uint32_t state = job_state_.load(std::memory_order_relaxed);
  while ((state & kJobClosed) == 0) {
    // Acquire: the job fields written before the caller opened the job.
    if (job_state_.compare_exchange_weak(state, state + 1, std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

void ThreadPool::leave_job() {
  // Release: this worker's task writes, for the caller.
  const uint32_t before = job_state_.fetch_sub(1, std::memory_order_seq_cst);
  if (before == (kJobClosed | 1u) && caller_sleeping_.load(std::memory_order_seq_cst)) {
    futex_wake_all(job_state_);
  }
}

void ThreadPool::worker_loop() {
  uint32_t seen = 0;  // the last generation this worker looked at
  for (;;) {
    auto job_posted = [&] { return generation_.load(std::memory_order_acquire) != seen; };
    if (!spin_until(job_posted, kWorkerSpin)) {
      n_workers_sleeping_.fetch_add(1, std::memory_order_seq_cst);
      while (generation_.load(std::memory_order_seq_cst) == seen) futex_wait(generation_, seen);
      n_workers_sleeping_.fetch_sub(1, std::memory_order_relaxed);
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_relaxed)) return;
    if (try_join_job()) {
      run_tasks();
      leave_job();
    }
  }
}

}  // namespace strata
