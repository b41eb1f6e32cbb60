// Attention (opset 23; 24's nonpad_kv_seqlen, 25's windows) on CUDA: cuDNN's fused attention where
// Note [fused attention] admits the node (fused_attention.h), else unfused, mirroring
// backends/cpu/attention/attention_cpu.cc over ops/attention/attention.h's geometry:
//   1. packed 3-D Q (and K, V) laid out as [B, H, S, D]; with a past cache, or present_key /
//      present_value asked for, K and V gathered into present [B, Hkv, T, D] (the output, or
//      the workspace) by attention_kernels.cu's concat kernel;
//   2. scores [B, Hq, S, T] = scale * Q K^T: one strided-batched cuBLAS GEMM over (b, kv head),
//      the G = Hq / Hkv query heads that share a key/value head (grouped-query attention) being
//      one [G*S, D] matrix, since query head h reads kv head h / G;
//   3. the masked softmax over each score row in place (softcap, attn_mask bool or float,
//      broadcast, is_causal, the windows, nonpad_kv_seqlen; qk_matmul_output in any mode);
//   4. Y = P V: one more strided-batched GEMM, into the output (packed: the workspace, then
//      gathered into [B, S, Hq*Dv]).
// float32, float16 or bfloat16 storage: the GEMMs accumulate in fp32 (blas.h), the softmax
// computes in float; under half storage the scores and probabilities are stored in the half type.
// Note [attention bias] covers what the masks mean.
#include <climits>

#include "backends/cuda/attention/attention_kernels.h"
#include "backends/cuda/attention/fused_attention.h"
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/dense/blas.h"
#include "backends/cuda/layout/glue_kernels.h"

namespace dnnx::cuda {

namespace {

using namespace attention_slot;

// Byte offsets into the workspace (0 size: not used), each 256-aligned.
struct AttentionWorkspace {
  size_t q = 0, k = 0, v = 0, scores = 0, y = 0, total = 0;
  size_t take(int64_t elements, size_t elem) {
    const size_t at = total;
    total += (static_cast<size_t>(elements) * elem + 255) / 256 * 256;
    return at;
  }
};

HeadsView heads_view(bool packed, int64_t heads, int64_t rows, int64_t cols) {
  return packed ? HeadsView{rows * heads * cols, cols, heads * cols} : HeadsView{heads * rows * cols, rows * cols, cols};
}

class AttentionKernel final : public Kernel {
 public:
  AttentionKernel(const CudaContext& ctx, AttentionGeometry g, DType dtype, bool gather_k, bool gather_v,
                  bool want_pk, bool want_pv, bool want_qk, GemmCall qk, GemmCall pv, AttentionWorkspace ws)
      : ctx_(ctx), g_(std::move(g)), dtype_(dtype), gather_k_(gather_k), gather_v_(gather_v), want_pk_(want_pk),
        want_pv_(want_pv), want_qk_(want_qk), qk_(qk), pv_(pv), ws_(ws) {}

  void run(const KernelArgs& args) const override {
    auto* ws = static_cast<uint8_t*>(args.workspace);
    const void* q = args.in<void>(kQ);
    if (g_.packed) {
      launch_heads_concat(nullptr, q, heads_view(true, g_.q_heads, g_.q_seq, g_.head), ws + ws_.q, g_.batch,
                          g_.q_heads, 0, g_.q_seq, g_.head, dtype_, ctx_.stream);
      q = ws + ws_.q;
    }
    const void* k = args.in<void>(kK);
    if (gather_k_) {
      void* present = want_pk_ ? args.out<void>(kPresentKey) : ws + ws_.k;
      launch_heads_concat(g_.has_past ? args.in<void>(kPastKey) : nullptr, k,
                          heads_view(g_.packed, g_.kv_heads, g_.kv_new, g_.head), present, g_.batch, g_.kv_heads,
                          g_.past, g_.kv_new, g_.head, dtype_, ctx_.stream);
      k = present;
    }
    const void* v = args.in<void>(kV);
    if (gather_v_) {
      void* present = want_pv_ ? args.out<void>(kPresentValue) : ws + ws_.v;
      launch_heads_concat(g_.has_past ? args.in<void>(kPastValue) : nullptr, v,
                          heads_view(g_.packed, g_.kv_heads, g_.kv_new, g_.v_head), present, g_.batch, g_.kv_heads,
                          g_.past, g_.kv_new, g_.v_head, dtype_, ctx_.stream);
      v = present;
    }
    void* scores = ws + ws_.scores;
    const size_t elem = dtype_size(dtype_);
    if (qk_.k == 0) {  // an empty dot product: zero scores
      check(cudaMemsetAsync(scores, 0, static_cast<size_t>(qk_.batch) * qk_.m * qk_.n * elem, ctx_.stream),
            "cudaMemsetAsync");
    } else {
      row_major_gemm(ctx_, qk_, q, k, scores);
    }
    launch_attention_softmax(g_, scores, g_.has_mask ? args.in<void>(kMask) : nullptr,
                             g_.has_nonpad ? args.in<int64_t>(kNonpad) : nullptr,
                             want_qk_ ? args.out<void>(kQk) : nullptr, dtype_, ctx_.stream);
    void* y = g_.packed ? static_cast<void*>(ws + ws_.y) : args.out<void>(kY);
    row_major_gemm(ctx_, pv_, scores, v, y);
    if (g_.packed) {  // [B, Hq, S, Dv] -> [B, S, Hq, Dv]
      BroadcastDims d;
      d.rank = 4;
      const int64_t sizes[4] = {g_.batch, g_.q_seq, g_.q_heads, g_.v_head};
      const int64_t strides[4] = {g_.q_heads * g_.q_seq * g_.v_head, g_.v_head, g_.q_seq * g_.v_head, 1};
      for (int i = 0; i < 4; ++i) {
        d.size[i] = sizes[i];
        d.stride_a[i] = strides[i];
      }
      launch_gather(y, args.out<void>(kY), elem, g_.batch * g_.q_seq * g_.q_heads * g_.v_head, d, ctx_.stream);
    }
  }

 private:
  const CudaContext& ctx_;
  AttentionGeometry g_;
  DType dtype_;
  bool gather_k_, gather_v_, want_pk_, want_pv_, want_qk_;
  GemmCall qk_, pv_;
  AttentionWorkspace ws_;
};

int to_int(const Node& node, int64_t v, const char* what) {
  if (v > INT_MAX) {
    node_fail<UnsupportedModelError>(node, std::string("Attention's GEMM ") + what + " " + std::to_string(v) +
                                               " exceeds cuBLAS's 2^31-1");
  }
  return static_cast<int>(v);
}

// The unfused path for g: the numbered steps of the header comment.
KernelChoice unfused_attention(const CudaContext& ctx, const Node& node, const AttentionGeometry& g, DType dtype) {
  const bool want_pk = node.has_output(kPresentKey), want_pv = node.has_output(kPresentValue);
  const bool gather_k = g.packed || g.has_past || want_pk, gather_v = g.packed || g.has_past || want_pv;
  const int64_t group = g.q_heads / g.kv_heads, t = g.total();
  const size_t elem = dtype_size(dtype);
  AttentionWorkspace ws;
  if (g.packed) ws.q = ws.take(g.batch * g.q_heads * g.q_seq * g.head, elem);
  if (gather_k && !want_pk) ws.k = ws.take(g.batch * g.kv_heads * t * g.head, elem);
  if (gather_v && !want_pv) ws.v = ws.take(g.batch * g.kv_heads * t * g.v_head, elem);
  ws.scores = ws.take(g.batch * g.q_heads * g.q_seq * t, elem);
  if (g.packed) ws.y = ws.take(g.batch * g.q_heads * g.q_seq * g.v_head, elem);
  // Per (b, kv head): the group's [G*S, D] queries against the head's [T, D] keys.
  GemmCall qk;
  qk.dtype = dtype;
  qk.trans_b = true;
  qk.batch = to_int(node, g.batch * g.kv_heads, "batch");
  qk.m = to_int(node, group * g.q_seq, "M");
  qk.n = to_int(node, t, "N");
  qk.k = to_int(node, g.head, "K");
  qk.alpha = g.scale;
  qk.stride_a = int64_t{qk.m} * g.head;
  qk.stride_b = t * g.head;
  qk.stride_y = int64_t{qk.m} * t;
  GemmCall pv;
  pv.dtype = dtype;
  pv.batch = qk.batch;
  pv.m = qk.m;
  pv.n = to_int(node, g.v_head, "N");
  pv.k = qk.n;
  pv.stride_a = qk.stride_y;
  pv.stride_b = t * g.v_head;
  pv.stride_y = int64_t{pv.m} * g.v_head;
  KernelChoice choice;
  const char* gemm = qk.batch == 1 ? (is_half(dtype) ? "cublasGemmEx" : "cublasSgemm")
                                   : (is_half(dtype) ? "cublasGemmStridedBatchedEx" : "cublasSgemmStridedBatched");
  choice.algorithm = std::string(gather_k || gather_v ? "kv gather+" : "") + gemm + "+masked softmax kernel+" + gemm +
                     (group > 1 ? " (grouped-query: " + std::to_string(group) + " query heads per kv head)" : "");
  choice.math = blas_math_name(ctx, dtype);
  choice.workspace_bytes = ws.total;
  choice.kernel = std::make_unique<AttentionKernel>(ctx, g, dtype, gather_k, gather_v, want_pk, want_pv,
                                                    node.has_output(kQk), qk, pv, ws);
  return choice;
}

// Note [fused attention]: cuDNN's fused scaled-dot-product attention (fused_attention.h) runs
// Attention in one kernel that never stores the [B, Hq, S, T] scores: less memory traffic and no
// workspace that grows with S*T. It takes a node only where its result is ONNX's:
//   - half storage (the fp16 and bf16 precisions): cuDNN's SDPA has no float32 kernel;
//   - no empty dimension (the unfused path writes the zeros of an empty key sequence);
//   - no past_key/past_value and no present_key/present_value asked for, no qk_matmul_output (the
//     fused kernel gathers nothing and never stores the scores);
//   - no softcap, no windows, no nonpad_kv_seqlen;
//   - no attn_mask: ONNX gives a row that a mask hides everywhere Y = 0 (Note [attention bias]),
//     and cuDNN's bias does not promise that (its max and sum of an all -inf row); is_causal
//     is cuDNN's top-left diagonal band, which never hides a whole row;
//   - grouped-query heads as ONNX has them (Hq a multiple of Hkv), D and Dv as this cuDNN takes
//     them: its check_support says (multiples of 8, up to 128 or 256 by version and GPU);
//   - a workspace within the model's workspace limit.
// Everything but the last two is known before cuDNN is asked; for those, the graph is built here,
// at plan time, and a refusal names the step and cuDNN's message. Every node the fused path does
// not take runs unfused, and its plan row says why under `rejected`.
std::string fused_attention_blocker(const CudaContext& ctx, const Node& node, const AttentionGeometry& g,
                                    DType dtype) {
  if (!fused_attention_built()) {
    return "this build has no cudnn-frontend (its headers, from the nvidia-cudnn-frontend wheel, were not found "
           "when dnnx was built)";
  }
  if (ctx.hooks.failure_of(kFusedAttentionName) != ForcedFailure::None) return "fails (forced by DNNX_TEST_FAIL_ALGO)";
  if (ctx.avoided(kFusedAttentionName)) return "failed at run time (the run-time fallback)";
  if (!is_half(dtype)) return std::string(dtype_name(dtype)) + " storage: cuDNN's fused attention takes fp16 or bf16";
  if (g.batch == 0 || g.q_heads == 0 || g.q_seq == 0 || g.kv_new == 0 || g.head == 0 || g.v_head == 0) {
    return "an empty tensor";
  }
  if (g.has_past || node.has_output(kPresentKey) || node.has_output(kPresentValue)) {
    return "a key/value cache (past_key/past_value or present_key/present_value)";
  }
  if (node.has_output(kQk)) return "qk_matmul_output is asked for (the fused kernel never stores the scores)";
  if (g.softcap != 0.0f) return "softcap";
  if (g.left_window >= 0 || g.right_window >= 0) return "left_window_size/right_window_size";
  if (g.has_nonpad) return "nonpad_kv_seqlen";
  if (g.has_mask) return "attn_mask (a fully masked row must give 0: Note [attention bias])";
  return "";
}

KernelChoice plan_attention(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>&) {
  const DType dtype = inputs[kQ].info.dtype;
  require_cuda_floating(node, inputs[kQ].info, dtype, "Q");
  require_cuda_floating(node, inputs[kK].info, dtype, "K");
  require_cuda_floating(node, inputs[kV].info, dtype, "V");
  const AttentionGeometry g = attention_geometry(node, inputs);
  if (g.has_mask && !g.mask_bool) require_cuda_floating(node, inputs[kMask].info, dtype, "attn_mask");
  if (g.has_past) {
    require_cuda_floating(node, inputs[kPastKey].info, dtype, "past_key");
    require_cuda_floating(node, inputs[kPastValue].info, dtype, "past_value");
  }
  std::string why = fused_attention_blocker(ctx, node, g, dtype);
  if (why.empty()) {
    size_t workspace = 0;
    if (auto kernel = make_fused_attention(ctx, g, dtype, workspace, why)) {
      const int64_t group = g.q_heads / g.kv_heads;
      KernelChoice choice;
      choice.algorithm = std::string(kFusedAttentionName) + (g.causal ? " (causal)" : "") +
                         (group > 1 ? " (grouped-query: " + std::to_string(group) + " query heads per kv head)" : "");
      choice.math = std::string(half_storage_name(dtype)) + " storage, tensor ops, fp32 softmax and accumulation";
      choice.workspace_bytes = workspace;
      choice.candidate = kFusedAttentionName;
      choice.rejected.push_back({"unfused (GEMM+masked softmax+GEMM)", "the fused kernel applies"});
      choice.kernel = std::move(kernel);
      return choice;
    }
  }
  KernelChoice choice = unfused_attention(ctx, node, g, dtype);
  choice.rejected.push_back({kFusedAttentionName, why});
  return choice;
}

}  // namespace

void register_cuda_attention_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Attention", bind(ctx, plan_attention)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
