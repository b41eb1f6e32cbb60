// The CPU backend's intra-op threads (Note [cpu threads] in thread_pool.cc): a fixed set of
// workers that split one kernel's loop with the calling thread.
#pragma once
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dnnx {

// fn(begin, end, worker): items [begin, end) on worker `worker`, in [0, workers of the call).
// One worker runs one range at a time, so a kernel may give each worker its own scratch slice.
using RangeFn = std::function<void(int64_t begin, int64_t end, int worker)>;

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // the caller plus threads - 1 workers
  ~ThreadPool();                     // wakes the workers and joins them
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;     // threads, the caller included
  void resize(int threads);  // waits for the job in flight, then restarts the workers

  // Runs fn over [0, n) on at most max_workers threads, the caller among them; returns when
  // every range is done and rethrows the first exception a range threw. One job runs at a time:
  // a call made while another thread's job holds the pool (or from inside a job) runs all of
  // [0, n) on the caller as worker 0, which is correct and does not oversubscribe the cores.
  void parallel_for(int64_t n, const RangeFn& fn, int max_workers = INT_MAX);

 private:
  void start(int threads);
  void stop();
  void worker_loop(int worker, uint64_t seen);  // seen: the last generation before it started
  // Takes ranges of job `generation` until none is left, or another job has begun (Note [late workers]).
  void run_ranges(int worker, uint64_t generation);

  std::mutex job_mutex_;  // held by the job in flight (and by resize)
  mutable std::mutex mutex_;  // guards the fields below
  std::condition_variable wake_;  // a new job, or stop
  std::condition_variable done_;  // the last range in flight finished
  std::vector<std::thread> workers_;
  int threads_ = 1;
  std::atomic<bool> stop_spinning_{false};  // stopping_, for a spinning worker to read unlocked
  int owner_pid_ = 0;  // a forked child has none of the workers: it runs every job alone
  bool stopping_ = false;
  // Bumped per job, so a worker joins each job once. Atomic: a worker spinning for the next
  // job reads it unlocked (Note [spinning workers] in thread_pool.cc); written under mutex_.
  std::atomic<uint64_t> generation_{0};
  // The job in flight: written under mutex_ before wake_, read by the workers it woke.
  const RangeFn* fn_ = nullptr;
  int64_t n_ = 0, grain_ = 1;
  int participants_ = 1;  // the workers the job may use, the caller included
  // Ranges taken and not finished yet; written under mutex_, read unlocked by the spinning caller.
  std::atomic<int> in_flight_{0};
  // The CPU the job's caller ran on when it woke the workers (Note [woken beside the caller]).
  std::atomic<int> caller_cpu_{-1};
  // Per participant w, the items of its block no range has taken yet: [next_[w], end_[w])
  // (Note [worker blocks] in thread_pool.cc).
  std::vector<int64_t> next_, end_;
  std::exception_ptr error_;
};

// The process's pool (Note [cpu threads]); created on first use with the available cores.
ThreadPool& cpu_thread_pool();
// dnnx.threads.set_num_threads: resizes the pool (OpenBLAS stays single-threaded).
void set_cpu_threads(int threads);
int cpu_threads();
// The OpenBLAS kernels picked for this CPU at run time ("Haswell", "SkylakeX", ...): its
// DYNAMIC_ARCH build chooses them per machine, and their rounding is what the tests pin.
std::string blas_core_name();

// At plan time: the threads a kernel splits `items` independent items across, each costing
// about `work_per_item` inner-loop steps; at least 1, and one per ~32k steps at most, since a
// worker's share must outweigh waking it (tens of microseconds).
int plan_workers(int64_t items, int64_t work_per_item);
// The plan's algorithm name: "im2col+gemm x2 threads", or the bare name for one thread.
std::string with_threads(const std::string& algorithm, int workers);

}  // namespace dnnx
