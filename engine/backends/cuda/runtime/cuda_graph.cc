#include "backends/cuda/runtime/cuda_graph.h"

#include <type_traits>
#include <vector>

#include "backends/cuda/runtime/edge_copies.h"

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

// One recorded copy node and the copies the executable graph holds for it now.
struct EdgeNode {
  cudaGraphNode_t node = nullptr;
  EdgeCopyBatch current;  // as recorded: none
};

class CudaGraph final : public DeviceGraph {
 public:
  // `graph` stays alive with `exec`: the edge nodes are named by their nodes in it.
  CudaGraph(GraphOwner graph, GraphExecOwner exec, cudaStream_t stream, std::vector<EdgeNode> in,
            std::vector<EdgeNode> out)
      : graph_(std::move(graph)), exec_(std::move(exec)), stream_(stream), in_(std::move(in)), out_(std::move(out)) {}

  void launch() const override { check(cudaGraphLaunch(exec_.get(), stream_), "cudaGraphLaunch"); }

  void launch(const std::vector<EdgeCopy>& in, const std::vector<EdgeCopy>& out) override {
    retarget(in_, in);
    retarget(out_, out);
    launch();
  }

 private:
  // Deals `copies` (the empty ones left out) to `nodes` in order, kEdgeCopiesPerLaunch each; a
  // node whose copies did not change since the last replay keeps its parameters untouched.
  void retarget(std::vector<EdgeNode>& nodes, const std::vector<EdgeCopy>& copies) {
    size_t next = 0;
    for (EdgeNode& n : nodes) {
      EdgeCopyBatch batch;
      for (; next < copies.size() && batch.count < kEdgeCopiesPerLaunch; ++next) {
        const EdgeCopy& c = copies[next];
        if (c.bytes == 0) continue;
        batch.dst[batch.count] = c.dst;
        batch.src[batch.count] = c.src;
        batch.bytes[batch.count] = c.bytes;
        ++batch.count;
      }
      if (batch != n.current) {
        set_edge_copies(exec_.get(), n.node, batch);
        n.current = batch;
      }
    }
    for (; next < copies.size(); ++next) {
      if (copies[next].bytes != 0) throw DeviceError("a graph replay got more edge copies than it was recorded with");
    }
  }

  GraphOwner graph_;
  GraphExecOwner exec_;
  cudaStream_t stream_;
  std::vector<EdgeNode> in_, out_;
};

// Ends a capture that `enqueue` abandoned, so that the stream takes ordinary work again.
void abandon_capture(cudaStream_t stream) noexcept {
  cudaGraph_t partial = nullptr;
  cudaStreamEndCapture(stream, &partial);
  GraphOwner discard(partial);
  cudaGetLastError();
}

// Records room for `copies` edge copies: empty copy launches, whose nodes each replay retargets.
std::vector<EdgeNode> record_edge_nodes(cudaStream_t stream, size_t copies) {
  std::vector<EdgeNode> nodes((copies + kEdgeCopiesPerLaunch - 1) / kEdgeCopiesPerLaunch);
  for (EdgeNode& n : nodes) {
    launch_edge_copies(n.current, stream);
    // The capture's open ends are now exactly the node just recorded.
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    const cudaGraphNode_t* ends = nullptr;
    size_t count = 0;
    check(cudaStreamGetCaptureInfo(stream, &status, nullptr, nullptr, &ends, nullptr, &count),
          "cudaStreamGetCaptureInfo");
    if (status != cudaStreamCaptureStatusActive || count != 1) {
      throw DeviceError("the edge copy node of a graph could not be found in the capture");
    }
    n.node = ends[0];
  }
  return nodes;
}

}  // namespace

std::unique_ptr<DeviceGraph> capture_graph(cudaStream_t stream, const std::function<void()>& enqueue,
                                           GraphEdges edges) {
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  std::vector<EdgeNode> in, out;
  try {
    in = record_edge_nodes(stream, edges.in);
    enqueue();
    out = record_edge_nodes(stream, edges.out);
  } catch (...) {
    abandon_capture(stream);
    throw;
  }
  cudaGraph_t raw = nullptr;
  check(cudaStreamEndCapture(stream, &raw), "cudaStreamEndCapture");  // a broken capture fails here
  GraphOwner graph(raw);
  cudaGraphExec_t exec = nullptr;
  check(cudaGraphInstantiateWithFlags(&exec, graph.get(), 0), "cudaGraphInstantiateWithFlags");
  GraphExecOwner owner(exec);
  // Uploaded now, so that the first replay costs no more than the others.
  check(cudaGraphUpload(exec, stream), "cudaGraphUpload");
  return std::make_unique<CudaGraph>(std::move(graph), std::move(owner), stream, std::move(in), std::move(out));
}

}  // namespace dnnx::cuda
