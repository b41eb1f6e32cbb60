// LinearAttention (opset 27): a recurrent state per key/value head replaces the softmax over keys.
// Shapes (B batch, T tokens, Hq / Hkv heads, Dk the query/key head size, Dv the value head size):
//   query [B, T, Hq*Dk], key [B, T, Hkv*Dk], value [B, T, Hkv*Dv] (heads packed in the last dim)
//   past_state [B, Hkv, Dk, Dv] (optional; zeros without it), its own float type S
//   decay [B, T, Hkv] (one per head) or [B, T, Hkv*Dk] (one per key feature): g, in log space
//   beta  [B, T, Hkv] or [B, T, 1]: the update rate
// -> output [B, T, Hq*Dv] (query's type), present_state [B, Hkv, Dk, Dv] (past_state's type, or
//    query's without one).
// Per token t, for each (b, kv head) with state S [Dk, Dv], under update_rule:
//   gated, gated_delta:  S <- exp(g_t) * S         (row i of S scaled by exp(g_t[i]))
//   delta, gated_delta:  u = beta_t * (v_t - S^T k_t), else u = v_t
//   every rule:          S <- S + k_t u^T;  o_t = scale * S^T q_t for each query head of the group
// Query head h reads the state of key/value head h / (Hq / Hkv) (grouped-query attention).
// scale 0 (or absent) means 1/sqrt(Dk). chunk_size is a tuning hint with no effect on the
// result (onnx's reference ignores it too). decay is required by the gated rules and refused by
// the others; beta likewise for the delta rules.
#pragma once
#include "ops/op.h"

namespace dnnx {

namespace linear_attention_slot {
constexpr size_t kQuery = 0, kKey = 1, kValue = 2, kPastState = 3, kDecay = 4, kBeta = 5;
constexpr size_t kOutput = 0, kPresentState = 1;
}  // namespace linear_attention_slot

struct LinearAttentionGeometry {
  int64_t batch = 0, tokens = 0, q_heads = 0, kv_heads = 0, key_head = 0, value_head = 0;
  float scale = 1.0f;
  bool gated = false, delta = false;  // the update rule: decay, delta correction
  bool has_past = false;
  bool decay_per_key = false;  // decay [B, T, Hkv*Dk], else [B, T, Hkv]
  bool beta_shared = false;    // beta [B, T, 1], else [B, T, Hkv]
};

LinearAttentionGeometry linear_attention_geometry(const Node& node, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
