// The edge copies of a replayed graph (cuda_graph.cc; Note [edge copies] in
// runtime/device_runner.cc): a run's device inputs copied into the arena before the layers, its
// outputs copied into the caller's arrays after them. One launch of one small kernel carries up to
// kEdgeCopiesPerLaunch copies by value, so that a graph's copy node takes a run's new addresses
// with one cudaGraphExecKernelNodeSetParams and costs one node however many inputs there are.
// (A memcpy node per copy would do too, but it refuses zero-length copies, and on the GPU it is a
// copy-engine operation, which starts later after a kernel than a kernel does.)
#pragma once
#include <cstddef>

#include <cuda_runtime.h>

namespace dnnx::cuda {

constexpr int kEdgeCopiesPerLaunch = 16;

struct EdgeCopyBatch {
  int count = 0;  // copies in use; 0: the kernel does nothing
  void* dst[kEdgeCopiesPerLaunch] = {};
  const void* src[kEdgeCopiesPerLaunch] = {};
  size_t bytes[kEdgeCopiesPerLaunch] = {};
};

bool operator==(const EdgeCopyBatch& a, const EdgeCopyBatch& b);
inline bool operator!=(const EdgeCopyBatch& a, const EdgeCopyBatch& b) { return !(a == b); }

// Queues the copies of `batch` on `stream` (during a capture: records the copy node).
void launch_edge_copies(const EdgeCopyBatch& batch, cudaStream_t stream);

// Points a recorded copy node of `exec` at `batch`'s copies, for the launches queued from now on.
void set_edge_copies(cudaGraphExec_t exec, cudaGraphNode_t node, const EdgeCopyBatch& batch);

}  // namespace dnnx::cuda
