// com.microsoft's QLinearAveragePool and QLinearSoftmax: what their op file and kernels share.
#pragma once
#include "ops/conv/conv_geometry.h"
#include "ops/op.h"

namespace dnnx {

// QLinearAveragePool's window over X's spatial dims (NCHW, or NHWC with channels_last).
ConvGeometry qlinear_pool_geometry(const Node& node, const Shape& x);
// QLinearSoftmax's rows: X as [outer, D, inner] (opset attribute < 13: D is every dim from the
// axis on, inner 1; from 13: D the axis alone).
struct SoftmaxRows {
  int64_t outer = 1, d = 1, inner = 1;
};
SoftmaxRows qlinear_softmax_rows(const Node& node, const Shape& x);

}  // namespace dnnx
