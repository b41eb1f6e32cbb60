#include "backends/cuda/cuda_graph.h"

#include <type_traits>

namespace dnnx::cuda {

namespace {

struct DestroyGraph {
  void operator()(cudaGraph_t graph) const noexcept { cudaGraphDestroy(graph); }
};
struct DestroyGraphExec {
  void operator()(cudaGraphExec_t exec) const noexcept { cudaGraphExecDestroy(exec); }
};
using GraphOwner = std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, DestroyGraph>;
using GraphExecOwner = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, DestroyGraphExec>;

class CudaGraph final : public DeviceGraph {
 public:
  CudaGraph(GraphExecOwner exec, cudaStream_t stream) : exec_(std::move(exec)), stream_(stream) {}
  void launch() const override { check(cudaGraphLaunch(exec_.get(), stream_), "cudaGraphLaunch"); }

 private:
  GraphExecOwner exec_;
  cudaStream_t stream_;
};

// Ends a capture that `enqueue` abandoned, so that the stream takes ordinary work again.
void abandon_capture(cudaStream_t stream) noexcept {
  cudaGraph_t partial = nullptr;
  cudaStreamEndCapture(stream, &partial);
  GraphOwner discard(partial);
  cudaGetLastError();
}

}  // namespace

std::unique_ptr<DeviceGraph> capture_graph(cudaStream_t stream, const std::function<void()>& enqueue) {
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  try {
    enqueue();
  } catch (...) {
    abandon_capture(stream);
    throw;
  }
  cudaGraph_t raw = nullptr;
  check(cudaStreamEndCapture(stream, &raw), "cudaStreamEndCapture");  // a broken capture fails here
  const GraphOwner graph(raw);
  cudaGraphExec_t exec = nullptr;
  check(cudaGraphInstantiateWithFlags(&exec, graph.get(), 0), "cudaGraphInstantiateWithFlags");
  GraphExecOwner owner(exec);
  // Uploaded now, so that the first replay costs no more than the others.
  check(cudaGraphUpload(exec, stream), "cudaGraphUpload");
  return std::make_unique<CudaGraph>(std::move(owner), stream);
}

}  // namespace dnnx::cuda
