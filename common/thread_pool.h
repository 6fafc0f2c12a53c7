// ThreadPool: one pool of compute threads sized to the machine, used by the
// CPU backend to split each kernel (matrix rows, attention heads) across cores.
// The calling thread takes part in the work, so a pool of N threads has N-1
// workers. Not reentrant: one parallel_for at a time (the engine thread); a
// nested or concurrent call is a bug and aborts.
//
// Built for low dispatch latency, since a decode step calls parallel_for a
// few times per layer for a millisecond or less of work each: workers are
// persistent, are woken by bumping a generation counter, spin briefly on it
// after finishing (the next call usually comes within microseconds), and
// only then sleep on a futex. Tasks are claimed one at a time from a shared
// counter, so uneven tasks balance themselves, and the caller waits only for
// workers that took part: one that wakes late (a futex wake-up can take
// hundreds of microseconds) is not waited for, the others did its share.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace strata {

class ThreadPool {
 public:
  // n_threads <= 0: one per CPU in the process's affinity mask (what
  // sched_getaffinity allows, which may be fewer than the machine has).
  explicit ThreadPool(int n_threads = 0);
  // Joins the workers. Must not run concurrently with parallel_for.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Workers + the calling thread; >= 1.
  int n_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(task) exactly once for every task in [0, n_tasks), spread over
  // the threads; returns when all are done (their writes are then visible to
  // the caller). fn must not throw. Which thread runs which task is not
  // fixed, so results must not depend on it.
  void parallel_for(int64_t n_tasks, const std::function<void(int64_t task)>& fn);

 private:
  void worker_loop();
  // Joins the open job: false when none is open (it finished before this
  // worker got to it). A joined worker must call leave_job() when done.
  bool try_join_job();
  void leave_job();
  // Claims and runs tasks of the current job until none are left.
  void run_tasks();

  std::vector<std::thread> workers_;

  // The current job, written by the caller while no worker has joined (the
  // job is closed and n_joined is 0) and read by joined workers.
  const std::function<void(int64_t)>* job_fn_ = nullptr;
  int64_t job_n_tasks_ = 0;

  // Each group on its own cache line: workers hammer next_task_ and
  // job_state_ while spinning threads poll generation_.
  alignas(64) std::atomic<uint32_t> generation_{0};  // bumped once per job (and at shutdown)
  std::atomic<int> n_workers_sleeping_{0};           // workers in (or entering) futex wait
  std::atomic<bool> stopping_{false};                // set before the final bump
  alignas(64) std::atomic<int64_t> next_task_{0};    // next unclaimed task of the job
  // kJobClosed | number of workers in the job. Workers join only while open;
  // the caller closes it when no task is left to claim, then waits for the
  // joined ones to leave. One word, so join-if-open is a single CAS.
  alignas(64) std::atomic<uint32_t> job_state_;
  std::atomic<bool> caller_sleeping_{false};  // caller in futex wait on job_state_
  std::atomic<bool> in_parallel_for_{false};  // catches reentrant / concurrent calls
};

}  // namespace strata
