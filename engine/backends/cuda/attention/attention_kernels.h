// Launchers of the attention family's kernels (attention_kernels.cu): RotaryEmbedding, and the
// pieces of Attention's unfused path (attention_cuda.cc) that are not cuBLAS GEMMs: the key/value
// gather into [B, Hkv, T, D] and the masked softmax over the score rows. Elements of `dtype`:
// float32, float16 or bfloat16, the arithmetic in float. Each queues on `stream` and checks the
// launch.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "ir/tensor.h"
#include "ops/attention/attention.h"
#include "ops/attention/rotary_embedding.h"

namespace dnnx::cuda {

// RotaryEmbedding (ops/attention/rotary_embedding.h): x, y of g's layout; cos, sin [rows, R/2];
// positions int64 [B, S] or null (row b*S + s). A position outside [0, max_position) gives
// zeros for that position's head vectors (the CPU raises; the plan says so).
void launch_rotary(const RotaryGeometry& g, const void* x, const void* cos, const void* sin, const int64_t* positions,
                   void* y, DType dtype, cudaStream_t stream);

// One tensor [B, H, rows, cols] as strides in elements: element (b, h, r, c) at
// b * batch + h * head + r * row + c.
struct HeadsView {
  int64_t batch = 0, head = 0, row = 0;
};

// out [B, H, past + fresh_rows, cols] = past [B, H, past, cols] (null when past is 0) followed by
// fresh's rows (a HeadsView over fresh_rows rows): the present key or value, or a packed
// [B, S, H*D] tensor laid out as [B, H, S, D] (past 0).
void launch_heads_concat(const void* past, const void* fresh, const HeadsView& fresh_view, void* out, int64_t batch,
                         int64_t heads, int64_t past_rows, int64_t fresh_rows, int64_t cols, DType dtype,
                         cudaStream_t stream);

// The masked softmax of Attention's scores, in place: scores [B, Hq, S, T] (already scaled) ->
// probabilities, after softcap and the bias of Note [attention bias] (ops/attention/attention.h),
// as backends/cpu/attention/attention_cpu.cc's softmax_row: a masked key's probability is 0,
// a fully masked row is all 0. mask: attn_mask (bool, or `dtype`) of shape g.mask4, or null;
// nonpad: int64 [B] or null; qk_out: qk_matmul_output [B, Hq, S, T] in g.qk_mode's stage, or null.
void launch_attention_softmax(const AttentionGeometry& g, void* scores, const void* mask, const int64_t* nonpad,
                              void* qk_out, DType dtype, cudaStream_t stream);

}  // namespace dnnx::cuda
