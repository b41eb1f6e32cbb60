// GridSample (opset 16: 4-D, modes bilinear / nearest / bicubic; 20: N-D, modes linear /
// nearest / cubic): Y[n, c, o...] samples X[n, c] at the normalized position Grid[n, o..., :].
//   X [N, C, D1..Dr], Grid [N, O1..Or, r] (its last dim lists x first: the position along Dr,
//   then Dr-1, ...) -> Y [N, C, O1..Or]. r is 2 or 3 (cubic: 2).
// A position p in [-1, 1] maps to a pixel index by align_corners (1: (p+1)/2 * (D-1); 0:
// ((p+1)*D - 1)/2). The sample is separable: per spatial dim 1 (nearest), 2 (linear) or 4
// (cubic, Keys a = -0.75) taps, each tap read through padding_mode (zeros: outside reads 0;
// border: clamped; reflection: mirrored at the borders). The formulas are onnx's reference
// implementation's, in X's float type as onnxruntime computes them.
#pragma once
#include "ops/op.h"

namespace dnnx {

enum class GridMode { Nearest, Linear, Cubic };
enum class GridPadding { Zeros, Border, Reflection };

struct GridSampleParams {
  GridMode mode = GridMode::Linear;
  GridPadding padding = GridPadding::Zeros;
  bool align_corners = false;
  Shape x;          // [N, C, D1..Dr]
  Shape grid;       // [N, O1..Or, r]
};

GridSampleParams grid_sample_params(const Node& node, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
