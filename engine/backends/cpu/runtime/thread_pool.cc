// Note [cpu threads]
// dnnx's pool owns the CPU parallelism and OpenBLAS runs single-threaded: OpenBLAS's own threads
// cost more than they gain on the small per-image GEMMs of a conv ([20x25]x[25x576] in LeNet),
// and the pthreads build of scipy-openblas32 has no per-thread setting (its header declares
// openblas_set_num_threads_local, but only the OpenMP build exports it), so pool workers cannot
// run it single-threaded while other callers keep its threads. So:
// - Conv splits the batch across the pool, each worker unrolling into its own workspace slice
//   (the depthwise conv splits the N*C input planes: Note [direct depthwise conv]);
//   MaxPool and AveragePool split the N*C planes;
// - every other GEMM (Gemm, MatMul, LSTM, the gradients) goes through sgemm (blas.cc), which
//   splits a large one into column or row blocks across the pool.
// Every split is into blocks whose shapes follow from the problem alone, never from the thread
// count (Note [thread-independent gemm blocks] in blas.cc), and the threads take those blocks:
// each output element is computed by the same single-threaded call whatever the thread count,
// so results do not depend on it. The pool is process-wide, like OpenBLAS's setting it
// replaces: several loaded models share the cores instead of each starting its own threads.
// Workers sleep on a condition variable between jobs, after spinning a while for the next one
// (Note [spinning workers]).
//
// Note [late workers]
// A worker that woke for job g takes ranges only while job g is the pool's job. Without that
// check, a worker woken late could find job g done and job g+1 begun, and take g+1's ranges
// under its own index even where g+1 was capped below it (max_workers): kernels index their
// per-worker scratch by that index (Conv's col slices), sized for the workers they planned, so
// it wrote past them. The GPU machine's 16 cores hit this (a segfault under tests/cuda, whose
// CPU references run small capped layers back to back); the CI machine's 2 never can, since
// with 2 threads every parallel job uses both.
//
// Note [worker blocks]
// A job's items are dealt in blocks, participant w's the w-th of `workers` equal ones, each
// taken from its front a range (grain) at a time; a participant whose block is done takes the
// last range of the block with the most items left. So without load from elsewhere each thread
// runs the same share of every layer: the pixels (channels-last convs), rows (depthwise, pools)
// or planes a thread wrote, the next layer mostly reads on the same core, from its own L2. With
// one shared counter the ranges alternated between the threads, and half of each layer's input
// came from the other core: MobileNetV2's 3x3 depthwise layers at 28x28 and below ran no faster
// on 2 threads than on 1. A thread slowed by other processes still gives its block's end away.
// Which thread runs an item never changes a result (Note [cpu threads]).
//
// Note [spinning workers]
// Waking a thread that sleeps on a condition variable costs far more than a small kernel's work
// on this project's 2-core CI machine (a VM): a job of 2 x 10 us took 170-200 us when the worker
// (and then the caller, waiting for it) had gone to sleep, against 9-47 us back to back. A
// layer of LeNet at batch 1 is 5-30 us, so 2 threads were slower than 1, and the LSTM's blocks
// did not gain either. So a worker that finishes a job spins for kSpin (checking the job
// counter, pausing between reads) before it sleeps, and the caller spins for its workers to
// finish before it waits: the layers of one run, and runs called back to back, find the
// workers awake. Every 64 pauses a spinning thread yields, so that on a busy core it gives way. kSpin is far below the 20 ms pause dnnx bench leaves between the engines'
// turns (dnnx/cli/timing.py), so the spinning never holds a core while onnxruntime is timed.
// Note [woken beside the caller]
// Linux often puts a worker woken by the caller's notify on the caller's own CPU (a wakeup lands
// beside its waker where the scheduler deems that cache-friendly), and a spinning worker can
// end up there too. There the two share one core while the other idles: the worker runs its
// block only when the caller yields, and the load balancer does not move either soon (both are
// cache-hot). On this project's 2-core machine, LeNet-5 at batch 10 on 2 threads ran 0.082 ms a
// call back to back and 0.111 ms (its 1-thread time) for the 20 calls after each 20 ms pause,
// with the worker found on the caller's CPU in /proc. So a worker that joins a job on the CPU
// the caller recorded steps off it: its affinity without that CPU (the kernel moves it at once),
// then its affinity as it was, so that the scheduler stays free to place it. Two system calls,
// only when the two share a CPU. Measured interleaved with onnxruntime in the speed sweep's way
// (a 20 ms pause, then 20 timed calls; 10 rounds, 5 pairs of runs with and without): LeNet-5 b10
// at 2 threads 1.11-1.13 -> 1.08-1.09 of onnxruntime's time, the MNIST rows LSTM (batch 128)
// 1.09-1.13 -> 1.05-1.09. (A machine shared with other processes still moves the worker back
// at times: the whole gain is not kept.)
#include "backends/cpu/runtime/thread_pool.h"

#include <cblas.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DNNX_CPU_RELAX() _mm_pause()
#else
#define DNNX_CPU_RELAX() std::this_thread::yield()
#endif

namespace dnnx {

namespace {

// Set while this thread runs a job's range: a nested parallel_for runs inline.
thread_local bool t_in_job = false;

struct InJob {
  InJob() { t_in_job = true; }
  ~InJob() { t_in_job = false; }
};

constexpr std::chrono::microseconds kSpin{300};  // Note [spinning workers]

// Spins until done() or kSpin has passed; true if done().
template <typename Done>
bool spin_until(Done done) {
  const auto give_up = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      DNNX_CPU_RELAX();
    }
    if (std::chrono::steady_clock::now() >= give_up) return done();
    sched_yield();  // a spinning thread gives way to any other runnable thread on its core
  }
}

// Note [woken beside the caller]: moves this thread off `cpu` when it runs there.
void step_off(int cpu) {
  if (cpu < 0 || sched_getcpu() != cpu) return;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || !CPU_ISSET(cpu, &allowed) || CPU_COUNT(&allowed) < 2) {
    return;
  }
  cpu_set_t others = allowed;
  CPU_CLR(cpu, &others);
  if (sched_setaffinity(0, sizeof(others), &others) == 0) sched_setaffinity(0, sizeof(allowed), &allowed);
}

int available_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

ThreadPool::ThreadPool(int threads) { start(threads); }

ThreadPool::~ThreadPool() { stop(); }

int ThreadPool::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return threads_;
}

void ThreadPool::resize(int threads) {
  std::lock_guard<std::mutex> job(job_mutex_);
  stop();
  start(threads);
}

void ThreadPool::start(int threads) {
  // The workers join jobs after this generation. Read here, not in the new thread: a job may
  // start before that thread runs, and a worker that took its generation as seen would never join.
  uint64_t seen = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    threads_ = std::max(1, threads);
    owner_pid_ = static_cast<int>(getpid());
    stopping_ = false;
    stop_spinning_ = false;
    seen = generation_;
  }
  for (int w = 1; w < threads_; ++w) workers_.emplace_back([this, w, seen] { worker_loop(w, seen); });
}

void ThreadPool::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    stop_spinning_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void ThreadPool::parallel_for(int64_t n, const RangeFn& fn, int max_workers) {
  if (n <= 0) return;
  std::unique_lock<std::mutex> job(job_mutex_, std::defer_lock);
  int workers = 1;
  uint64_t generation = 0;
  if (n > 1 && max_workers > 1 && !t_in_job && job.try_lock()) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (static_cast<int>(getpid()) == owner_pid_) workers = static_cast<int>(std::min<int64_t>({threads_, max_workers, n}));
  }
  if (workers <= 1) {
    if (job.owns_lock()) job.unlock();  // let another thread's call have the workers meanwhile
    fn(0, n, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    n_ = n;
    // A few ranges per worker, so a worker slowed by another process's load takes fewer.
    grain_ = std::max<int64_t>(1, n / (4 * workers));
    participants_ = workers;
    next_.resize(static_cast<size_t>(workers));
    end_.resize(static_cast<size_t>(workers));
    for (int w = 0; w < workers; ++w) next_[w] = n * w / workers, end_[w] = n * (w + 1) / workers;
    error_ = nullptr;
    generation = ++generation_;
    caller_cpu_.store(sched_getcpu(), std::memory_order_relaxed);
  }
  wake_.notify_all();
  run_ranges(0, generation);
  // No range is left to take (or one threw): wait for the ranges other workers still run. A
  // worker that has not woken yet holds none, and is not waited for (Note [spinning workers]).
  spin_until([this] { return in_flight_.load(std::memory_order_acquire) == 0; });
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return in_flight_ == 0; });
  next_ = end_;  // after a throw some ranges were never taken: a worker waking late must find none
  fn_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void ThreadPool::worker_loop(int worker, uint64_t seen) {
  for (;;) {
    spin_until([&] {
      return stop_spinning_.load(std::memory_order_relaxed) || generation_.load(std::memory_order_acquire) != seen;
    });
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      if (worker >= participants_) continue;  // a job capped below the pool's size
    }
    step_off(caller_cpu_.load(std::memory_order_relaxed));  // Note [woken beside the caller]
    // The job may be over already (woken late): then no range is left, and nothing runs. It may
    // even be followed by the next job, capped below this worker: run_ranges checks the generation.
    run_ranges(worker, seen);
  }
}

void ThreadPool::run_ranges(int worker, uint64_t generation) {
  InJob in_job;
  for (;;) {
    int64_t begin = 0, end = 0;
    const RangeFn* fn = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // Only the job this worker joined (Note [late workers]): a later one may cap its workers
      // below `worker`, whose scratch slice (a kernel's `worker` index) it did not allot.
      if (generation_ != generation || error_) return;
      if (next_[worker] < end_[worker]) {  // its own block, from the front (Note [worker blocks])
        begin = next_[worker];
        end = next_[worker] = std::min(end_[worker], begin + grain_);
      } else {  // the last range of the block with the most items left
        int victim = -1;
        for (int w = 0; w < participants_; ++w) {
          if (end_[w] > next_[w] && (victim < 0 || end_[w] - next_[w] > end_[victim] - next_[victim])) victim = w;
        }
        if (victim < 0) return;
        end = end_[victim];
        begin = end_[victim] = std::max(next_[victim], end - grain_);
      }
      fn = fn_;
      ++in_flight_;
    }
    try {
      (*fn)(begin, end, worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (--in_flight_ == 0) done_.notify_one();
  }
}

ThreadPool& cpu_thread_pool() {
  static ThreadPool pool([] {
    scipy_openblas_set_num_threads(1);  // Note [cpu threads]: the pool owns the parallelism
    return available_cores();
  }());
  return pool;
}

void set_cpu_threads(int threads) {
  ThreadPool& pool = cpu_thread_pool();
  scipy_openblas_set_num_threads(1);  // in case something else changed it since
  if (pool.size() != threads) pool.resize(threads);
}

int cpu_threads() { return cpu_thread_pool().size(); }

std::string blas_core_name() {
  const char* name = scipy_openblas_get_corename();
  return name ? name : "unknown";
}

int plan_workers(int64_t items, int64_t work_per_item) {
  constexpr int64_t kMinWorkPerWorker = int64_t{1} << 15;
  const int64_t by_work = items * std::max<int64_t>(1, work_per_item) / kMinWorkPerWorker;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({cpu_threads(), items, by_work})));
}

std::string with_threads(const std::string& algorithm, int workers) {
  return workers > 1 ? algorithm + " x" + std::to_string(workers) + " threads" : algorithm;
}

}  // namespace dnnx
