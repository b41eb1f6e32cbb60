// Attention through cuDNN's fused scaled-dot-product attention (the SDPA node of cudnn-frontend's
// graph API): Q K^T, the scale, the causal mask, the softmax and P V in one kernel, the scores
// never stored. Which nodes take it is decided in attention_cuda.cc (Note [fused attention]);
// this file builds and runs the cuDNN graph. fused_attention.cc is the one file that includes
// cudnn-frontend's headers (heavy; they come from the nvidia-cudnn-frontend wheel): a build
// without them (DNNX_HAVE_CUDNN_FRONTEND undefined) has no fused path, and says so in the plan.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "backends/cuda/backend/cuda_context.h"
#include "ops/attention/attention.h"
#include "runtime/backend.h"

namespace dnnx::cuda {

// The plan's name for the fused path, and the KernelChoice::candidate a run-time fallback avoids.
inline constexpr const char* kFusedAttentionName = "cuDNN fused attention (SDPA)";

// Whether this build has the fused path (compiled with cudnn-frontend's headers).
bool fused_attention_built();

// The fused kernel for g (4-D or packed Q, K, V; no mask but is_causal; no caches, no softcap,
// no qk_matmul_output: what Note [fused attention] admits) with `dtype` (float16 or bfloat16)
// storage: the cuDNN graph validated, checked for support and its plan built, here at plan time.
// Null when cuDNN refuses the graph, or its workspace is over ctx's workspace limit: `why` then
// says which step refused and cuDNN's message. `workspace` gets the bytes the plan needs.
std::unique_ptr<Kernel> make_fused_attention(const CudaContext& ctx, const AttentionGeometry& g, DType dtype,
                                             size_t& workspace, std::string& why);

}  // namespace dnnx::cuda
