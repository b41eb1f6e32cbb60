// cuDNN's int8 convolution for Int8Conv (int8_conv_graph.h has the graph and its layouts).
#include "backends/cuda/quant/int8_conv_graph.h"

#ifdef DNNX_HAVE_CUDNN_FRONTEND

#include <unordered_map>
#include <utility>
#include <vector>

#include "backends/cuda/runtime/frontend_graph.h"

namespace dnnx::cuda {

namespace fe = cudnn_frontend;

namespace {

// The graph's tensor ids: the variant pack maps them to the run's buffers.
constexpr int64_t kXUid = 1, kWUid = 2, kYUid = 3;

// Channels-last strides of a [n, c, h, w] tensor.
std::vector<int64_t> nhwc_strides(int64_t c, int64_t h, int64_t w) { return {h * w * c, 1, w * c, c}; }

class CudnnInt8Conv final : public Int8ConvGraph {
 public:
  CudnnInt8Conv(std::shared_ptr<fe::graph::Graph> graph, size_t workspace) : graph_(std::move(graph)), workspace_(workspace) {}

  size_t workspace_bytes() const override { return workspace_; }

  void run(const CudaContext& ctx, const int8_t* x, const int8_t* w, int32_t* sums, void* workspace) const override {
    // cuDNN takes every pointer as void*; it only reads X and W.
    std::unordered_map<int64_t, void*> pack = {{kXUid, const_cast<int8_t*>(x)}, {kWUid, const_cast<int8_t*>(w)},
                                               {kYUid, sums}};
    // the convolution queues on ctx.stream after the pre-kernel
    execute_frontend_graph(ctx, *graph_, pack, workspace, "cuDNN int8 convolution");
  }

 private:
  std::shared_ptr<fe::graph::Graph> graph_;
  size_t workspace_;
};

std::shared_ptr<fe::graph::Graph> conv_graph(const Int8ConvShape& s) {
  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_io_data_type(fe::DataType_t::INT8)
      .set_intermediate_data_type(fe::DataType_t::INT32)
      .set_compute_data_type(fe::DataType_t::INT32);
  const int64_t cg = s.c / s.group;  // W's channels
  auto x = graph->tensor(fe::graph::Tensor_attributes()
                             .set_name("X")
                             .set_uid(kXUid)
                             .set_dim({s.n, s.c, s.h, s.w})
                             .set_stride(nhwc_strides(s.c, s.h, s.w)));
  auto w = graph->tensor(fe::graph::Tensor_attributes()
                             .set_name("W")
                             .set_uid(kWUid)
                             .set_dim({s.m, cg, s.kh, s.kw})
                             .set_stride(nhwc_strides(cg, s.kh, s.kw)));
  auto options = fe::graph::Conv_fprop_attributes()
                     .set_name("int8 conv")
                     .set_padding({0, 0})  // X is padded with its zero point already
                     .set_stride({s.stride_h, s.stride_w})
                     .set_dilation({s.dilation_h, s.dilation_w});
  auto sums = graph->conv_fprop(x, w, options);
  // The int32 output through an identity node, as cudnn-frontend's int8 sample writes it.
  auto identity = fe::graph::Pointwise_attributes().set_name("identity").set_mode(fe::PointwiseMode_t::IDENTITY);
  auto y = graph->pointwise(sums, sums, identity);
  y->set_output(true)
      .set_uid(kYUid)
      .set_data_type(fe::DataType_t::INT32)
      .set_dim({s.n, s.m, s.oh, s.ow})
      .set_stride(nhwc_strides(s.m, s.oh, s.ow));
  return graph;
}

}  // namespace

std::unique_ptr<Int8ConvGraph> make_int8_conv_graph(const CudaContext& ctx, const Int8ConvShape& s, std::string& why) {
  std::shared_ptr<fe::graph::Graph> graph = conv_graph(s);
  // check_support is the step that knows this cuDNN's and this GPU's int8 limits (channel
  // multiples, groups)
  size_t workspace = 0;
  why = build_frontend_graph(ctx, *graph, workspace);
  if (!why.empty()) return nullptr;
  return std::make_unique<CudnnInt8Conv>(std::move(graph), workspace);
}

}  // namespace dnnx::cuda

#else  // built without cudnn-frontend's headers: no int8 convolution (the layer runs on the host)

namespace dnnx::cuda {

std::unique_ptr<Int8ConvGraph> make_int8_conv_graph(const CudaContext&, const Int8ConvShape&, std::string& why) {
  why = "this build has no cudnn-frontend";
  return nullptr;
}

}  // namespace dnnx::cuda

#endif
