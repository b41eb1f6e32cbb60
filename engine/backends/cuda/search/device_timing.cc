#include "backends/cuda/search/device_timing.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "backends/cuda/runtime/cuda_check.h"

namespace dnnx::cuda {

namespace {

// Both events of one measurement, destroyed on every path.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    check(cudaEventCreate(&start), "cudaEventCreate");
    if (cudaEventCreate(&stop) != cudaSuccess) {
      cudaEventDestroy(start);
      check(cudaErrorUnknown, "cudaEventCreate");
    }
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
};

}  // namespace

double mean_device_ms(const CudaContext& ctx, const std::function<void()>& run, const char* what, int runs) {
  run();  // warm-up
  EventPair events;
  float ms = 0;
  cudaError_t status = cudaEventRecord(events.start, ctx.stream);
  for (int i = 0; i < runs && status == cudaSuccess; ++i) run();
  if (status == cudaSuccess) status = cudaEventRecord(events.stop, ctx.stream);
  if (status == cudaSuccess) status = cudaEventSynchronize(events.stop);
  if (status == cudaSuccess) status = cudaEventElapsedTime(&ms, events.start, events.stop);
  check(status, what);
  return static_cast<double>(ms) / runs;
}

namespace {

// Runs `run` for about `ms` of device time (at most 2000 calls after one alone); the mean of the
// calls after the first, or -1 when a call takes no measurable time.
double run_for(const CudaContext& ctx, const std::function<void()>& run, double ms, const char* what) {
  const double once = mean_device_ms(ctx, run, what, 1);
  if (once <= 0) return -1;
  const int runs = static_cast<int>(std::min(2000.0, std::max(0.0, ms - once) / once)) + 1;
  return mean_device_ms(ctx, run, what, runs);
}

}  // namespace

// Note [steady warm-up]: the process's first warm-up ran kFirstWarmUpMs whatever the GPU's state.
// In a cold load it came after cudnnFind had kept the GPU busy, and it was most of the 348 ms
// that ResNet-50's re-timing took (batch 256, fp32, an H100, 2026-12-06). So it now runs in
// slices of kWarmUpSliceMs and ends once two slices in a row have the same mean within
// kSteadyWithin (the clocks have settled), or at kFirstWarmUpMs.
void warm_up(const CudaContext& ctx, const std::function<void()>& run, double ms, const char* what) {
  static std::atomic<bool> warmed{false};  // once per process: the GPU's clocks, not the model's
  if (warmed.exchange(true)) {
    run_for(ctx, run, ms, what);
    return;
  }
  double previous = -1;
  for (double spent = 0; spent < kFirstWarmUpMs; spent += kWarmUpSliceMs) {
    const double mean = run_for(ctx, run, kWarmUpSliceMs, what);
    if (mean <= 0) return;
    if (previous > 0 && std::abs(mean - previous) <= kSteadyWithin * previous) return;
    previous = mean;
  }
}

// Note [background search]: a searcher engine times a candidate only while no foreground run has
// work on the device, and keeps the timing only if none started meanwhile (its kernels, at the
// lowest stream priority, gave way to the run's and were slowed); else it times again, up to
// kRetakes times, and then keeps the lowest of its disturbed takes. A candidate's timing
// (milliseconds) is the unit it yields at: runs that bring their inputs from the host leave the
// SMs idle while the bytes cross the bus, and the search fills those gaps.
// Under runs back to back with their data on the device there is no such gap (tens of
// microseconds between runs, which a poll every 200 us misses), and a search that waited for one
// searched no shape of ResNet-50 in 10 s (bench/RESULTS_CUDA.md, sessions 8 and 9). So both the
// wait and the retakes are bounded:
//   - a wait for quiet gives up after kQuietWaitMs; once one has given up the device counts as
//     saturated, and the next waits give up after kSaturatedWaitMs, until one sees quiet again;
//   - a take that a run disturbed is taken again only after a quiet wait (a retake under
//     saturation would be disturbed too), kRetakes times at most.
// A disturbed take only overstates a candidate's time (the foreground's kernels went first), and
// all of a layer's candidates are timed under the same load; the swap itself is judged by the two
// plans' replayed graphs taking turns (_background_search.py), so a misranked candidate cannot
// make the model slower.
constexpr int kRetakes = 3;
constexpr double kQuietWaitMs = 100.0, kSaturatedWaitMs = 2.0;

namespace {

thread_local bool saturated = false;  // the search's thread: its last wait gave up

}  // namespace

QuietWait wait_for_quiet(const CudaContext& ctx) {
  if (!ctx.options.runs_in_flight) return {0, true};
  const auto start = std::chrono::steady_clock::now();
  const double limit_ms = saturated ? kSaturatedWaitMs : kQuietWaitMs;
  while (ctx.options.runs_in_flight->load() > 0) {
    const std::chrono::duration<double, std::milli> waited = std::chrono::steady_clock::now() - start;
    if (waited.count() >= limit_ms) {
      saturated = true;
      ctx.stats->count("quiet_waits_given_up");
      return {ctx.options.runs_started ? ctx.options.runs_started->load() : 0, false};
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  saturated = false;
  return {ctx.options.runs_started ? ctx.options.runs_started->load() : 0, true};
}

namespace {

bool stayed_quiet(const CudaContext& ctx, uint64_t since) {
  if (!ctx.options.runs_in_flight) return true;
  return ctx.options.runs_in_flight->load() == 0 && (!ctx.options.runs_started || ctx.options.runs_started->load() == since);
}

}  // namespace

int runs_for(double once_ms) { return once_ms < 0.05 ? 20 : once_ms < 1.0 ? 5 : 2; }

CandidateTimes time_candidates(const CudaContext& ctx, size_t count, const std::function<bool(size_t)>& prepare,
                               const std::function<bool(size_t)>& run, const char* what) {
  CandidateTimes t{std::vector<double>(count, -1), std::vector<bool>(count, false)};
  for (int round = -1; round < kTimingRounds; ++round) {  // round -1 warms the GPU up
    for (size_t i = 0; i < count; ++i) {
      if (t.failed[i] || !prepare(i)) continue;
      bool ok = true;
      auto run_once = [&] { ok = ok && run(i); };
      if (round < 0) {
        wait_for_quiet(ctx);
        warm_up(ctx, run_once, kWarmUpMs, what);
        t.failed[i] = !ok;
        if (ok) break;  // else the next candidate warms the GPU up
        continue;
      }
      double ms = -1;
      for (int take = 0; take <= kRetakes && ok; ++take) {
        const QuietWait quiet = wait_for_quiet(ctx);
        const double once = mean_device_ms(ctx, run_once, what, 1);
        const double mean = mean_device_ms(ctx, run_once, what, runs_for(once));
        ms = ms < 0 ? mean : std::min(ms, mean);
        if (quiet.quiet && stayed_quiet(ctx, quiet.runs_started)) {
          ms = mean;  // an undisturbed timing replaces the disturbed ones
          break;
        }
        if (!quiet.quiet) break;  // saturated: a retake would be disturbed as well
        ctx.stats->count("timings_retaken");
      }
      t.failed[i] = !ok;
      t.ms[i] = !ok ? -1 : t.ms[i] < 0 ? ms : std::min(t.ms[i], ms);
    }
  }
  return t;
}

void fill_search_pattern(const CudaContext& ctx, void* data, size_t bytes) {
  if (bytes > 0) check(cudaMemsetAsync(data, 0x3c, bytes, ctx.stream), "cudaMemsetAsync (search scratch)");
}

}  // namespace dnnx::cuda
