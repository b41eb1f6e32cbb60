// How a quantization parameter (a scale, a zero point) covers the tensor it quantizes: shared by
// QuantizeLinear, DequantizeLinear and the integer ops' per-row/per-column zero points.
//
// Note [quantization granularity]: ONNX's QuantizeLinear and DequantizeLinear take one of three
// forms, told apart by the scale's shape (as onnxruntime tells them):
//   per tensor  scale is a scalar or a 1-element 1-D tensor (block_size 0)
//   per axis    scale is 1-D of x.shape[axis] values (opset 13 on, block_size 0)
//   blocked     block_size > 0 (opset 21 on): scale has x's rank, x's dims but for
//               dims[axis] = ceil(x.shape[axis] / block_size); element a of the axis uses scale
//               entry a / block_size
// The zero point, where given, has the scale's shape. With x seen as [outer, axis_len, inner]
// around the axis, element (o, a, i) reads parameter entry index(o, a, i).
#pragma once
#include "ops/op.h"

namespace dnnx {

enum class QuantGranularity { PerTensor, PerAxis, Blocked };

struct QuantLayout {
  QuantGranularity granularity = QuantGranularity::PerTensor;
  int64_t outer = 1, axis_len = 1, inner = 1;  // x as [outer, axis_len, inner]
  int64_t block_size = 0;                       // blocked only
  int64_t blocks = 1;                           // blocked: ceil(axis_len / block_size)

  // The parameter entry of x's element (o, a, i).
  int64_t index(int64_t o, int64_t a, int64_t i) const {
    switch (granularity) {
      case QuantGranularity::PerTensor: return 0;
      case QuantGranularity::PerAxis: return a;
      case QuantGranularity::Blocked: break;
    }
    return (o * blocks + a / block_size) * inner + i;
  }
};

// The layout of `scale` (and `zero_point`, when present: it must have the scale's shape) over x,
// from the node's axis (default 1) and block_size (default 0) attributes; InvalidModelError
// naming the node and the shapes when they do not fit together, UnsupportedModelError for a form
// the node's opset lacks (per axis before 13, blocked before 21).
QuantLayout quant_layout(const Node& node, const Shape& x, const Shape& scale, const Shape* zero_point);

}  // namespace dnnx
