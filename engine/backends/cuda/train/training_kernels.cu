// The training kernels: the losses of train/loss.h and the SGD of train/sgd.h, written to give
// the CPU's results (double sums for the loss, unfused float arithmetic for the update).
#include <algorithm>
#include <cmath>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/launch.cuh"
#include "backends/cuda/train/training_kernels.h"

namespace dnnx::cuda {

namespace {

constexpr int kLossThreads = 256;

// The first index of the row's maximum, as std::max_element finds it.
__device__ int64_t row_argmax(const float* row, int64_t c) {
  int64_t best = 0;
  for (int64_t j = 1; j < c; ++j) {
    if (row[j] > row[best]) best = j;
  }
  return best;
}

// Sums every thread's (loss, correct) in a fixed tree order; thread 0 writes *stats.
__device__ void reduce_to_stats(double loss, long long correct, double scale, StepStats* stats) {
  __shared__ double loss_part[kLossThreads];
  __shared__ long long correct_part[kLossThreads];
  const int t = threadIdx.x;
  loss_part[t] = loss;
  correct_part[t] = correct;
  __syncthreads();
  for (int half = kLossThreads / 2; half > 0; half /= 2) {
    if (t < half) {
      loss_part[t] += loss_part[t + half];
      correct_part[t] += correct_part[t + half];
    }
    __syncthreads();
  }
  if (t == 0) {
    const double total = loss_part[0] * scale;
    stats->loss = total;
    stats->correct = correct_part[0];
    stats->non_finite = isfinite(total) ? 0 : kLossNotFinite;
    stats->unused = 0;
  }
}

// scores y [n, c], labels [n] in [0, c) (checked on the host). d_y [n, c] or null.
__global__ void cross_entropy_kernel(const float* y, int64_t n, int64_t c, const int64_t* labels, bool log_probs,
                                     float* d_y, StepStats* stats) {
  const double inv_n = n > 0 ? 1.0 / static_cast<double>(n) : 0.0;
  double loss = 0;
  long long correct = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float* row = y + i * c;
    const int64_t label = labels[i];
    const int64_t best = row_argmax(row, c);
    correct += best == label ? 1 : 0;
    float* d_row = d_y ? d_y + i * c : nullptr;
    if (log_probs) {
      loss -= row[label];
      if (d_row) {
        for (int64_t j = 0; j < c; ++j) d_row[j] = j == label ? static_cast<float>(-inv_n) : 0.0f;
      }
      continue;
    }
    // log softmax(x)[j] = (x[j] - max) - log(sum exp(x - max)), summed in double.
    const float max = row[best];
    double sum = 0;
    for (int64_t j = 0; j < c; ++j) sum += exp(static_cast<double>(row[j] - max));
    const double log_sum = log(sum);
    loss += log_sum - static_cast<double>(row[label] - max);
    if (d_row) {
      for (int64_t j = 0; j < c; ++j) {
        const double p = exp(static_cast<double>(row[j] - max) - log_sum);
        d_row[j] = static_cast<float>((p - (j == label ? 1.0 : 0.0)) * inv_n);
      }
    }
  }
  reduce_to_stats(loss, correct, inv_n, stats);
}

// Note [mse reduction]: the mean squared error reads y and the target and writes d_y, n * c
// elements each (at the LSTM bench's batch 256, 67M: one block took a large part of the step),
// so it runs on many blocks and stays bit-identical from run to run: kLossScratchBlocks blocks
// each sum a fixed contiguous chunk in a fixed tree order (double, as the CPU sums), then one
// block adds the partial sums in block order. The rows counted right (y's argmax is the
// target's, per row of c) take one block per row, counted with integer atomics, exact in any
// order; in a row holding NaN the first-maximum rule may pick another index than the CPU's scan
// (the loss is NaN then, and the step fails anyway).

// The block's double sum, in a fixed tree order (every thread gets it).
__device__ double block_sum(double v) {
  __shared__ double part[kLossThreads];
  const int t = threadIdx.x;
  part[t] = v;
  __syncthreads();
  for (int half = kLossThreads / 2; half > 0; half /= 2) {
    if (t < half) part[t] += part[t + half];
    __syncthreads();
  }
  const double total = part[0];
  __syncthreads();  // part may be reused by the caller
  return total;
}

// Block b sums (y - target)^2 over [b * chunk, (b + 1) * chunk) into partial[b]; d_y (or null).
__global__ void mse_partials(const float* y, const float* target, int64_t count, int64_t chunk, double inv,
                             float* d_y, double* partial) {
  const int64_t begin = blockIdx.x * chunk;
  const int64_t end = begin + chunk < count ? begin + chunk : count;
  double loss = 0;
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const double diff = static_cast<double>(y[i]) - target[i];
    loss += diff * diff;
    if (d_y) d_y[i] = static_cast<float>(2.0 * diff * inv);
  }
  loss = block_sum(loss);
  if (threadIdx.x == 0) partial[blockIdx.x] = loss;
}

// The first index of a row's maximum (row_argmax's answer for a row without NaN), by one block.
__device__ int64_t block_argmax(const float* row, int64_t c) {
  __shared__ float best_value[kLossThreads];
  __shared__ int64_t best_index[kLossThreads];
  const int t = threadIdx.x;
  int64_t best = t < c ? t : 0;
  for (int64_t j = t + blockDim.x; j < c; j += blockDim.x) {
    if (row[j] > row[best]) best = j;
  }
  best_value[t] = row[best];
  best_index[t] = best;
  __syncthreads();
  for (int half = kLossThreads / 2; half > 0; half /= 2) {
    if (t < half) {
      const float v = best_value[t + half];
      const int64_t i = best_index[t + half];
      if (v > best_value[t] || (v == best_value[t] && i < best_index[t])) {
        best_value[t] = v;
        best_index[t] = i;
      }
    }
    __syncthreads();
  }
  const int64_t answer = best_index[0];
  __syncthreads();
  return answer;
}

// One block per row of c: *right += 1 where y's and the target's argmax agree.
__global__ void mse_rows_right(const float* y, const float* target, int64_t c, unsigned long long* right) {
  const int64_t row = blockIdx.x;
  const int64_t a = block_argmax(y + row * c, c);
  const int64_t b = block_argmax(target + row * c, c);
  if (threadIdx.x == 0 && a == b) atomicAdd(right, 1ULL);
}

// One block: the partial sums in block order, then *stats.
__global__ void mse_finish(const double* partial, int blocks, double inv, const unsigned long long* right,
                           StepStats* stats) {
  double loss = 0;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) loss += partial[b];
  reduce_to_stats(loss, threadIdx.x == 0 ? static_cast<long long>(*right) : 0, inv, stats);
}

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

// One block per chunk (Note [multi-tensor update] in param_update_cuda.cc).
__global__ void check_finite_chunks(const UpdateChunk* chunks, int64_t count, const float* lr, float* device_lr,
                                    StepStats* stats) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *device_lr = *lr;  // Note [lr staging]
  // The whole block returns (the first clause is the same for every thread: no block of this
  // kernel writes kLossNotFinite).
  if (stats->non_finite == kLossNotFinite || blockIdx.x >= count) return;
  const UpdateChunk c = chunks[blockIdx.x];
  int bad = 0;
  for (int i = threadIdx.x; i < c.n; i += blockDim.x) bad |= !isfinite(c.grad[i]);
  if (__syncthreads_or(bad) && threadIdx.x == 0) record_first_code(&stats->non_finite, c.code);
}

// train/sgd.h, in the CPU's order of float operations (no fused multiply-adds).
__global__ void sgd_chunks(const UpdateChunk* chunks, int64_t count, SgdOptions o, const float* lr_ptr,
                           const StepStats* stats, StepStats* report) {
  if (report && blockIdx.x == 0 && threadIdx.x == 0) *report = *stats;  // no block changes *stats
  if (stats->non_finite != 0 || blockIdx.x >= count) return;  // the whole block
  const UpdateChunk c = chunks[blockIdx.x];
  const float lr = *lr_ptr, mu = o.momentum, wd = o.weight_decay;  // device memory (Note [lr staging])
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

__global__ void accumulate_kernel(float* dst, const float* src, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dst[i] += src[i];
  }
}

}  // namespace

void launch_loss(const LossCall& call, StepStats* stats, const LossScratch& scratch, cudaStream_t stream) {
  if (call.kind == LossKind::CrossEntropy) {
    cross_entropy_kernel<<<1, kLossThreads, 0, stream>>>(call.y, call.n, call.c,
                                                          static_cast<const int64_t*>(call.target),
                                                          call.scores == ScoreKind::LogProbs, call.d_y, stats);
    check_launch("loss");
    return;
  }
  // Note [mse reduction]
  const auto* target = static_cast<const float*>(call.target);
  const int64_t count = call.n * call.c;
  const double inv = count > 0 ? 1.0 / static_cast<double>(count) : 0.0;
  const int64_t chunk = std::max<int64_t>(1, (count + kLossScratchBlocks - 1) / kLossScratchBlocks);
  const int blocks = static_cast<int>((count + chunk - 1) / chunk);
  check(cudaMemsetAsync(scratch.right, 0, sizeof(*scratch.right), stream), "cudaMemsetAsync (loss)");
  if (blocks > 0) {
    mse_partials<<<blocks, kLossThreads, 0, stream>>>(call.y, target, count, chunk, inv, call.d_y, scratch.partial);
    check_launch("mse loss");
  }
  if (call.n > 0 && call.c > 0) {
    mse_rows_right<<<static_cast<unsigned>(call.n), kLossThreads, 0, stream>>>(call.y, target, call.c, scratch.right);
    check_launch("mse rows right");
  }
  mse_finish<<<1, kLossThreads, 0, stream>>>(scratch.partial, blocks, inv, scratch.right, stats);
  check_launch("mse loss");
}

void launch_check_finite(const UpdateChunk* chunks, int64_t count, const float* lr, float* device_lr,
                         StepStats* stats, cudaStream_t stream) {
  // One block at least, so that the lr is staged when there is nothing to check.
  check_finite_chunks<<<static_cast<unsigned>(std::max<int64_t>(count, 1)), kChunkThreads, 0, stream>>>(
      chunks, count, lr, device_lr, stats);
  check_launch("check_finite");
}

void launch_sgd(const UpdateChunk* chunks, int64_t count, const SgdOptions& options, const float* lr,
                const StepStats* stats, StepStats* report, cudaStream_t stream) {
  // One block at least, so that the report is written when there is nothing to update.
  sgd_chunks<<<static_cast<unsigned>(std::max<int64_t>(count, 1)), kChunkThreads, 0, stream>>>(chunks, count, options,
                                                                                               lr, stats, report);
  check_launch("sgd");
}

void launch_accumulate(float* dst, const float* src, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  accumulate_kernel<<<grid_for(n), kBlock, 0, stream>>>(dst, src, n);
  check_launch("accumulate");
}

}  // namespace dnnx::cuda
