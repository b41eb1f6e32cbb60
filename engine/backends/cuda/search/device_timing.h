// Timing work on the model's stream at plan time: the one timing policy of every exhaustive
// search (Search::time and Search::time_on_scratch, search.h, call it; nothing else times).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "backends/cuda/backend/cuda_context.h"
#include "runtime/backend.h"

namespace dnnx::cuda {

// The mean device time of `run` (which queues work on ctx.stream): one warm-up call, then `runs`
// calls between two CUDA events. A failure is a DeviceError naming `what`.
double mean_device_ms(const CudaContext& ctx, const std::function<void()>& run, const char* what, int runs = 10);

// Runs `run` until about `ms` of device time have passed (at most 2000 calls), and the first
// time in the process until its times are steady, kFirstWarmUpMs at most (Note [steady
// warm-up], device_timing.cc): an idle GPU runs its first work at lower clocks, which would rank
// a search's first candidates unfairly (the same LeNet GEMM candidate timed 7.4 us in one
// process and 9.6 us in another on an H200 after a 3 ms warm-up). A search calls it once, with
// its first candidate, before it times anything.
void warm_up(const CudaContext& ctx, const std::function<void()>& run, double ms, const char* what);
constexpr double kFirstWarmUpMs = 200.0;
constexpr double kWarmUpSliceMs = 10.0;
constexpr double kSteadyWithin = 0.02;

// Searches time each candidate in kTimingRounds rounds over the whole list and keep the lower
// mean: single means of 5-20 us kernels varied by up to 40% between processes on an H200.
constexpr int kTimingRounds = 2;
constexpr double kWarmUpMs = 3.0;

// A search's timing of its `count` candidates, the policy above in one place (cuDNN's re-timed
// candidates, cuBLASLt's, and the planner's own kernels, through Search). `prepare(i)` readies candidate i
// and says whether it can be timed (false: skipped this round); `run(i)` queues it once and
// returns false when it cannot run. After warm_up with the first candidate that runs, each is
// timed in kTimingRounds rounds over the list (the mean of runs_for(one run's time) runs) and
// keeps the lower. ms[i]: -1 for a candidate never timed; failed[i]: it could not run.
// How many runs one timing of a candidate averages: 20 under 50 us, 5 under 1 ms, 2 above (a
// batch-256 conv of several milliseconds varies by a few percent at most, and five runs of each
// FFT candidate were seconds of a ResNet-50 load: Note [retimed within reach]).
int runs_for(double once_ms);

struct CandidateTimes {
  std::vector<double> ms;
  std::vector<bool> failed;
};
CandidateTimes time_candidates(const CudaContext& ctx, size_t count, const std::function<bool(size_t)>& prepare,
                               const std::function<bool(size_t)>& run, const char* what);

// Note [background search] (device_timing.cc): on a searcher engine, waits until no foreground
// run has work on the device, for a bounded time, and says how many runs have started so far and
// whether the device went quiet (at once {0, true} elsewhere). The timing above takes every
// measurement this way; a search's other device work (cuDNN's Find) waits for it too.
struct QuietWait {
  uint64_t runs_started = 0;
  bool quiet = true;  // false: the wait gave up, foreground runs keep the device busy
};
QuietWait wait_for_quiet(const CudaContext& ctx);

// Fills a search's scratch input with a non-zero pattern (timing on zeros can flatter a kernel):
// every float 0x3c3c3c3c, about 0.0115; every float16 about 1.06, every bfloat16 about 0.0115.
void fill_search_pattern(const CudaContext& ctx, void* data, size_t bytes);

}  // namespace dnnx::cuda
