#include <algorithm>
#include <cstdint>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/edge_copies.h"

namespace dnnx::cuda {

namespace {

constexpr unsigned kCopyThreads = 256;
constexpr size_t kMaxCopyBlocks = 1024;  // per copy; larger copies loop (grid-stride)

// Copy blockIdx.y of the batch: 16-byte words where both ends allow, else 4-byte ones, else bytes.
__global__ void edge_copies(EdgeCopyBatch batch) {
  const int c = blockIdx.y;
  if (c >= batch.count) return;
  auto* dst = static_cast<unsigned char*>(batch.dst[c]);
  const auto* src = static_cast<const unsigned char*>(batch.src[c]);
  const size_t bytes = batch.bytes[c];
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const auto ends = reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src);
  size_t done = 0;
  if (ends % 16 == 0) {
    const size_t words = bytes / 16;
    for (size_t i = first; i < words; i += stride) reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
    done = words * 16;
  } else if (ends % 4 == 0) {
    const size_t words = bytes / 4;
    for (size_t i = first; i < words; i += stride) reinterpret_cast<uint32_t*>(dst)[i] = reinterpret_cast<const uint32_t*>(src)[i];
    done = words * 4;
  }
  for (size_t i = done + first; i < bytes; i += stride) dst[i] = src[i];
}

}  // namespace

bool operator==(const EdgeCopyBatch& a, const EdgeCopyBatch& b) {
  if (a.count != b.count) return false;
  for (int i = 0; i < a.count; ++i) {
    if (a.dst[i] != b.dst[i] || a.src[i] != b.src[i] || a.bytes[i] != b.bytes[i]) return false;
  }
  return true;
}

namespace {

// One row of blocks per copy, as many blocks as the largest copy needs (up to kMaxCopyBlocks).
dim3 grid_for(const EdgeCopyBatch& batch) {
  size_t largest = 0;
  for (int i = 0; i < batch.count; ++i) largest = std::max(largest, batch.bytes[i]);
  const size_t per_block = size_t{16} * kCopyThreads;
  const size_t blocks = std::clamp<size_t>((largest + per_block - 1) / per_block, 1, kMaxCopyBlocks);
  return dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(std::max(batch.count, 1)));
}

}  // namespace

void launch_edge_copies(const EdgeCopyBatch& batch, cudaStream_t stream) {
  edge_copies<<<grid_for(batch), kCopyThreads, 0, stream>>>(batch);
  check_launch("edge copy kernel");
}

void set_edge_copies(cudaGraphExec_t exec, cudaGraphNode_t node, const EdgeCopyBatch& batch) {
  static_assert(sizeof(EdgeCopyBatch) <= 4096, "kernel arguments are limited to 4 KiB");
  EdgeCopyBatch arg = batch;
  void* args[] = {&arg};
  cudaKernelNodeParams p = {};
  p.func = reinterpret_cast<void*>(&edge_copies);
  p.gridDim = grid_for(batch);
  p.blockDim = dim3(kCopyThreads);
  p.kernelParams = args;
  check(cudaGraphExecKernelNodeSetParams(exec, node, &p), "cudaGraphExecKernelNodeSetParams (edge copies)");
}

}  // namespace dnnx::cuda
