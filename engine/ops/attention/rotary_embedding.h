// RotaryEmbedding (opset 23): rotates the first R = rotary_embedding_dim (0: all D) features of
// each head by per-position angles given as caches.
//   input      [B, H, S, D] or packed [B, S, H*D] (packed needs num_heads)
//   cos/sin    [max_position, R/2] with position_ids [B, S] (int64), else [B, S, R/2]
//   -> output of input's shape. Pairs (x1, x2) are features (k, k + R/2) (interleaved: (2k,
//   2k+1)); out1 = cos*x1 - sin*x2, out2 = sin*x1 + cos*x2; features from R on pass through.
#pragma once
#include "ops/op.h"

namespace dnnx {

struct RotaryGeometry {
  int64_t batch = 0, heads = 0, seq = 0, head = 0, rotary = 0;
  bool packed = false, interleaved = false, has_positions = false;
  int64_t max_position = 0;  // the caches' first dim, with position_ids
};

RotaryGeometry rotary_geometry(const Node& node, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
