// cuDNN's fused attention for Attention (fused_attention.h; Note [fused attention] in
// attention_cuda.cc says which nodes come here). The graph, per node, at plan time:
//   Q [B, Hq, S, D], K [B, Hkv, T, D], V [B, Hkv, T, Dv] -> O [B, Hq, S, Dv]
// as 4-D tensors over the node's own buffers: a 4-D input's strides are [Hq*S*D, S*D, D, 1], a
// packed [B, S, Hq*D] one's [S*Hq*D, D, Hq*D, 1] (the same bytes read as [B, S, H, D]), so no
// gather runs either way; Y likewise. The storage is the node's half type, the softmax and both
// products accumulate in float (the intermediate and compute types). Hq / Hkv query heads share
// a key/value head (grouped-query attention) as in ONNX: cuDNN reads query head h's keys from
// kv head h / (Hq / Hkv). No softmax statistics are written (inference).
#include "backends/cuda/attention/fused_attention.h"

#ifdef DNNX_HAVE_CUDNN_FRONTEND

#include <unordered_map>
#include <utility>
#include <vector>

#include "backends/cuda/runtime/frontend_graph.h"

namespace dnnx::cuda {

namespace fe = cudnn_frontend;

namespace {

using namespace attention_slot;

// The graph's tensor ids: the variant pack maps them to the run's buffers.
constexpr int64_t kQUid = 1, kKUid = 2, kVUid = 3, kOUid = 4;

// A tensor [B, H, rows, cols]'s strides over its buffer: packed ([B, rows, H*cols]) or 4-D.
std::vector<int64_t> head_strides(bool packed, int64_t heads, int64_t rows, int64_t cols) {
  if (packed) return {rows * heads * cols, cols, heads * cols, 1};
  return {heads * rows * cols, rows * cols, cols, 1};
}

class FusedAttentionKernel final : public Kernel {
 public:
  FusedAttentionKernel(const CudaContext& ctx, std::shared_ptr<fe::graph::Graph> graph)
      : ctx_(ctx), graph_(std::move(graph)) {}

  void run(const KernelArgs& args) const override {
    // cuDNN takes every pointer as void*; it only reads Q, K and V.
    std::unordered_map<int64_t, void*> pack = {{kQUid, const_cast<void*>(args.in<void>(kQ))},
                                               {kKUid, const_cast<void*>(args.in<void>(kK))},
                                               {kVUid, const_cast<void*>(args.in<void>(kV))},
                                               {kOUid, args.out<void>(kY)}};
    execute_frontend_graph(ctx_, *graph_, pack, args.workspace, kFusedAttentionName);
  }

 private:
  const CudaContext& ctx_;
  std::shared_ptr<fe::graph::Graph> graph_;  // built: its execution plan holds cuDNN's kernel
};

// The graph of fused_attention.cc's header comment, not built yet.
std::shared_ptr<fe::graph::Graph> sdpa_graph(const AttentionGeometry& g, DType dtype) {
  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_io_data_type(dtype == DType::BFloat16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  auto input = [&](const char* name, int64_t uid, int64_t heads, int64_t rows, int64_t cols) {
    return graph->tensor(fe::graph::Tensor_attributes()
                             .set_name(name)
                             .set_uid(uid)
                             .set_dim({g.batch, heads, rows, cols})
                             .set_stride(head_strides(g.packed, heads, rows, cols)));
  };
  auto q = input("Q", kQUid, g.q_heads, g.q_seq, g.head);
  auto k = input("K", kKUid, g.kv_heads, g.kv_new, g.head);
  auto v = input("V", kVUid, g.kv_heads, g.kv_new, g.v_head);
  auto options = fe::graph::SDPA_attributes().set_name("attention").set_generate_stats(false).set_attn_scale(g.scale);
  if (g.causal) {
    // ONNX's causal frontier without a past cache, j <= i: the diagonal from the top-left corner.
    options.set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT).set_diagonal_band_right_bound(0);
  }
  auto outputs = graph->sdpa(q, k, v, std::move(options));
  outputs[0]
      ->set_output(true)
      .set_uid(kOUid)
      .set_dim({g.batch, g.q_heads, g.q_seq, g.v_head})
      .set_stride(head_strides(g.packed, g.q_heads, g.q_seq, g.v_head));
  return graph;
}

}  // namespace

bool fused_attention_built() { return true; }

std::unique_ptr<Kernel> make_fused_attention(const CudaContext& ctx, const AttentionGeometry& g, DType dtype,
                                             size_t& workspace, std::string& why) {
  std::shared_ptr<fe::graph::Graph> graph = sdpa_graph(g, dtype);
  // check_support is the step that knows this cuDNN's limits on head sizes and sequence lengths
  why = build_frontend_graph(ctx, *graph, workspace);
  if (!why.empty()) return nullptr;
  return std::make_unique<FusedAttentionKernel>(ctx, std::move(graph));
}

}  // namespace dnnx::cuda

#else  // built without cudnn-frontend's headers: no fused path (attention_cuda.cc asks first)

namespace dnnx::cuda {

bool fused_attention_built() { return false; }

std::unique_ptr<Kernel> make_fused_attention(const CudaContext&, const AttentionGeometry&, DType, size_t&,
                                             std::string& why) {
  why = "this build has no cudnn-frontend";
  return nullptr;
}

}  // namespace dnnx::cuda

#endif
