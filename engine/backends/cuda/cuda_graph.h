// CUDA graphs for the executor's device runs (core/device_runner.cc): the work one run of a
// plan queues is recorded by stream capture, instantiated once and then replayed with a single
// cudaGraphLaunch, which saves the per-kernel launch cost of every layer.
#pragma once
#include <functional>
#include <memory>

#include "backends/cuda/cuda_handles.h"
#include "core/backend.h"

namespace dnnx::cuda {

// Records what `enqueue` queues on `stream` (nothing runs). Capture is thread-local: other
// threads of the process (another model, PyTorch) keep working meanwhile, and this thread may
// make no call that is unsafe during capture (a cudaMalloc, a synchronize). When `enqueue`
// throws, or the capture was broken, the stream is back to normal and the error propagates.
std::unique_ptr<DeviceGraph> capture_graph(cudaStream_t stream, const std::function<void()>& enqueue);

}  // namespace dnnx::cuda
