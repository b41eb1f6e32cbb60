// CUDA graphs for the executor's device runs (runtime/device_runner.cc): the work one run of a
// plan queues is recorded by stream capture, instantiated once and then replayed with a single
// cudaGraphLaunch, which saves the per-kernel launch cost of every layer. A graph may carry edge
// copies (edge_copies.h): copy nodes before and after the recorded work whose addresses each
// replay sets anew, so that a run's inputs and outputs move in the same launch.
#pragma once
#include <functional>
#include <memory>

#include "backends/cuda/runtime/cuda_handles.h"
#include "runtime/backend.h"

namespace dnnx::cuda {

// Records what `enqueue` queues on `stream` (nothing runs), with room for `edges`. Capture is
// thread-local: other threads of the process (another model, PyTorch) keep working meanwhile, and
// this thread may make no call that is unsafe during capture (a cudaMalloc, a synchronize). When
// `enqueue` throws, or the capture was broken, the stream is back to normal and the error
// propagates.
std::unique_ptr<DeviceGraph> capture_graph(cudaStream_t stream, const std::function<void()>& enqueue,
                                           GraphEdges edges = {});

}  // namespace dnnx::cuda
