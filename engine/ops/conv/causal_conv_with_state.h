// CausalConvWithState (opset 27): a depthwise 1-D convolution that sees only the current and
// past positions, carrying the last k-1 positions from one call to the next (decode loops of
// Mamba and Gated DeltaNet). Shapes (B batch, C channels, L positions, k the kernel size >= 1):
//   input [B, C, L], weight [C, 1, k], bias [C] (optional), past_state [B, C, k-1] (optional:
//   zeros without it), all of one float type
// -> output [B, C, L], present_state [B, C, k-1].
// With the padded row p = concat(past_state, input) [B, C, k-1+L]:
//   output[b, c, l] = act(bias[c] + sum_{i<k} weight[c, 0, i] * p[b, c, l+i])
//   present_state   = the last k-1 positions of p (past positions too when L < k-1)
// act is the identity (activation "none") or SiLU x*sigmoid(x) ("silu", alias "swish").
#pragma once
#include "ops/op.h"

namespace dnnx {

namespace causal_conv_slot {
constexpr size_t kInput = 0, kWeight = 1, kBias = 2, kPastState = 3;
constexpr size_t kOutput = 0, kPresentState = 1;
}  // namespace causal_conv_slot

struct CausalConvGeometry {
  int64_t batch = 0, channels = 0, length = 0, kernel = 0;
  bool has_bias = false, has_past = false, silu = false;
};

CausalConvGeometry causal_conv_geometry(const Node& node, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
