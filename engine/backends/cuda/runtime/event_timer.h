// Per-layer device times from CUDA events (Engine::profile): an event is recorded before each
// layer and after the last. Recorded while a graph is being captured, an event becomes a node of
// the graph (cudaEventRecordExternal), so a replay times every layer without launch gaps.
#pragma once
#include <memory>

#include "backends/cuda/runtime/cuda_handles.h"
#include "runtime/backend.h"

namespace dnnx::cuda {

std::unique_ptr<LayerTimer> make_event_timer(cudaStream_t stream, size_t marks);

}  // namespace dnnx::cuda
