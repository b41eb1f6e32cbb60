// Note [one update kernel]: a step ends with the non-finite check of every gradient, then SGD
// on every parameter, and no parameter may change before the check has read every gradient (a
// failed step leaves them all as they were). Two launches (check, then SGD) cost LeNet's last:2
// step on an H200 5.7 + 5.7 us, most of it two launches' ramp-up and drain for 1.6 MB of
// gradients. Here one cooperative grid checks its chunks, waits at a grid-wide barrier
// (cooperative_groups' grid.sync: the launch guarantees every block is resident, so the barrier
// cannot deadlock), then updates them. After the barrier the flags and the staged lr are read
// with volatile loads, which go to L2 where the other blocks' atomics and stores landed (a
// block's L1 may still hold what it read before the barrier). The grid strides over the chunks
// when there are more chunks than resident blocks. SGD's arithmetic is the CPU's, element for
// element (unfused float operations), so neither the chunking nor the grid changes a bit.
#include <cooperative_groups.h>

#include <algorithm>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/param_update_kernels.h"

namespace dnnx::cuda {

namespace {

namespace cg = cooperative_groups;

// Sets *flag to `code` unless it holds a smaller non-zero code already (0: nothing found yet), so
// that whichever block finds one first, the flag ends at the first parameter's code.
__device__ void record_first_code(int32_t* flag, int32_t code) {
  int32_t seen = *flag;
  while (seen == 0 || seen > code) {
    const int32_t before = atomicCAS(flag, seen, code);
    if (before == seen) return;
    seen = before;
  }
}

__device__ StepStats read_after_barrier(const StepStats* stats) {
  const volatile StepStats* v = stats;
  StepStats s;
  s.loss = v->loss;
  s.correct = v->correct;
  s.non_finite = v->non_finite;
  s.unused = v->unused;
  return s;
}

// train/sgd.h on one chunk, in the CPU's order of float operations (no fused multiply-adds).
__device__ void sgd_chunk(const UpdateChunk& c, const SgdOptions& o, float lr) {
  const float mu = o.momentum, wd = o.weight_decay;
  for (int i = threadIdx.x; i < c.n; i += blockDim.x) {
    const float g = __fadd_rn(c.grad[i], __fmul_rn(wd, c.w[i]));
    if (mu == 0.0f) {
      c.w[i] = __fsub_rn(c.w[i], __fmul_rn(lr, g));
      continue;
    }
    const float v = __fadd_rn(__fmul_rn(mu, c.velocity[i]), g);
    c.velocity[i] = v;
    c.w[i] = __fsub_rn(c.w[i], __fmul_rn(lr, o.nesterov ? __fadd_rn(g, __fmul_rn(mu, v)) : v));
  }
}

__global__ void __launch_bounds__(kChunkThreads)
    update_kernel(const UpdateChunk* chunks, int64_t count, SgdOptions o, const float* lr, float* device_lr,
                  StepStats* stats, StepStats* report) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *device_lr = *lr;  // Note [lr staging]
  // No block writes kLossNotFinite, so every block reads the same answer here.
  if (stats->non_finite != kLossNotFinite) {
    for (int64_t b = blockIdx.x; b < count; b += gridDim.x) {
      const UpdateChunk c = chunks[b];
      int bad = 0;
      for (int i = threadIdx.x; i < c.n; i += blockDim.x) bad |= !isfinite(c.grad[i]);
      if (__syncthreads_or(bad) && threadIdx.x == 0) record_first_code(&stats->non_finite, c.code);
    }
  }
  cg::this_grid().sync();
  const StepStats s = read_after_barrier(stats);
  if (report && blockIdx.x == 0 && threadIdx.x == 0) *report = s;
  if (s.non_finite != 0) return;  // the whole grid
  const float step_lr = *static_cast<volatile float*>(device_lr);
  for (int64_t b = blockIdx.x; b < count; b += gridDim.x) sgd_chunk(chunks[b], o, step_lr);
}

}  // namespace

int update_grid_blocks(int64_t count) {
  int device = 0, cooperative = 0, sms = 0, per_sm = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device), "cudaDeviceGetAttribute");
  if (!cooperative) throw DeviceError("the update kernel needs cooperative launches, which this GPU does not offer");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, update_kernel, kChunkThreads, 0),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor (update kernel)");
  const int64_t resident = static_cast<int64_t>(std::max(per_sm, 1)) * std::max(sms, 1);
  return static_cast<int>(std::clamp<int64_t>(count, 1, resident));
}

void launch_update(const UpdateChunk* chunks, int64_t count, int grid_blocks, const SgdOptions& options,
                   const float* lr, float* device_lr, StepStats* stats, StepStats* report, cudaStream_t stream) {
  SgdOptions o = options;
  void* args[] = {&chunks, &count, &o, &lr, &device_lr, &stats, &report};
  check(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(update_kernel), dim3(grid_blocks),
                                    dim3(kChunkThreads), args, 0, stream),
        "cudaLaunchCooperativeKernel (update)");
}

}  // namespace dnnx::cuda
