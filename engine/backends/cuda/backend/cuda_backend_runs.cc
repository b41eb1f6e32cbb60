// The CudaBackend's part in device runs (Note [device runs] in runtime/device_runner.cc): graph
// capture, event timers, joins with external streams and the arrays handed to the caller.
#include "backends/cuda/backend/cuda_backend.h"
#include "backends/cuda/runtime/cuda_graph.h"
#include "backends/cuda/runtime/event_timer.h"

namespace dnnx::cuda {

std::unique_ptr<DeviceGraph> CudaBackend::capture(const std::function<void()>& enqueue, GraphEdges edges) const {
  return capture_graph(context_->stream, enqueue, edges);
}

std::unique_ptr<LayerTimer> CudaBackend::layer_timer(size_t marks) const {
  return make_event_timer(context_->stream, marks);
}

int CudaBackend::device_of(const void* ptr) const {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  const bool on_device = attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
  return on_device ? attributes.device : -1;
}

void CudaBackend::copy_on_device(void* dst, const void* src, size_t bytes) const {
  if (bytes == 0) return;
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, context_->stream),
        "cudaMemcpyAsync (device to device)");
}

void CudaBackend::wait_for_stream(uintptr_t stream) const { streams_->join(stream, context_->stream); }

void* CudaBackend::allocate_array(size_t bytes) const {
  try {
    return arrays_->allocate(bytes);
  } catch (const DeviceError&) {
    arrays_->trim();
  }
  try {
    return arrays_->allocate(bytes);
  } catch (const DeviceError& e) {
    throw DeviceError(name() + ": " + e.what());
  }
}

void CudaBackend::release_array(void* ptr, size_t bytes, const std::vector<uintptr_t>& readers) const noexcept {
  cudaSetDevice(context_->options.device);
  arrays_->release(ptr, bytes, readers);
}

}  // namespace dnnx::cuda
