// Attention (opset 23; 24: nonpad_kv_seqlen; 25: left_window_size, right_window_size): the one
// geometry its kernels read. Shapes (B batch, Hq / Hkv heads, S query and L new key positions,
// P past positions, T = P + L, D the query/key head size, Dv the value head size):
//   Q  [B, Hq, S, D]  or packed [B, S, Hq*D]   (packed needs q_num_heads and kv_num_heads)
//   K  [B, Hkv, L, D] or packed [B, L, Hkv*D]
//   V  [B, Hkv, L, Dv] or packed [B, L, Hkv*Dv]
//   attn_mask        bool (true: attend) or Q's float type (added), broadcast right-aligned to
//                    [B, Hq, S, T]; a last dim shorter than T is padded with masked positions
//   past_key/value   [B, Hkv, P, D] / [B, Hkv, P, Dv] (together)
//   nonpad_kv_seqlen int64 [B]: keys j >= nonpad[b] are masked (not with a past cache)
// -> Y [B, Hq, S, Dv] (packed: [B, S, Hq*Dv]), present_key/value [B, Hkv, T, D / Dv],
//    qk_matmul_output [B, Hq, S, T].
// Query head h reads key/value head h / (Hq / Hkv) (grouped-query attention).
// Note [attention bias]: the masks combine into one additive bias per score, 0 or -inf (or
// the float mask's value): attn_mask, the causal frontier j <= i + offset (offset P with a past
// cache, nonpad[b] - S with nonpad_kv_seqlen, else 0), the window offset+i-left <= j <=
// offset+i+right, and the padding j < nonpad[b]. A row whose bias is -inf everywhere has no key
// to attend: its probabilities, and so its Y, are 0 (onnx's reference and onnxruntime agree).
#pragma once
#include "ops/op.h"

namespace dnnx {

namespace attention_slot {
constexpr size_t kQ = 0, kK = 1, kV = 2, kMask = 3, kPastKey = 4, kPastValue = 5, kNonpad = 6;
constexpr size_t kY = 0, kPresentKey = 1, kPresentValue = 2, kQk = 3;
}  // namespace attention_slot

// What qk_matmul_output holds (onnx's reference numbering, which onnxruntime's node cases follow).
enum class QkOutput { Scores = 0, Softcapped = 1, WithBias = 2, Probabilities = 3 };

struct AttentionGeometry {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_seq = 0, kv_new = 0, past = 0, head = 0, v_head = 0;
  int64_t total() const { return past + kv_new; }
  bool packed = false;  // 3-D Q, K, V
  float scale = 1.0f;   // 1 / sqrt(D) unless given
  float softcap = 0.0f; // 0: none
  bool causal = false;
  int64_t left_window = -1, right_window = -1;  // -1: unbounded on that side
  QkOutput qk_mode = QkOutput::Scores;
  bool has_mask = false, mask_bool = false, has_past = false, has_nonpad = false;
  Shape mask4;  // attn_mask's shape with leading 1s to rank 4
};

AttentionGeometry attention_geometry(const Node& node, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
