#include "ops/quant/quant_layout.h"

namespace dnnx {

QuantLayout quant_layout(const Node& node, const Shape& x, const Shape& scale, const Shape* zero_point) {
  auto one_value_shape = [](const Shape& s) { return s.empty() || (s.size() == 1 && s[0] == 1); };
  if (zero_point && *zero_point != scale && !(one_value_shape(*zero_point) && one_value_shape(scale))) {
    node_fail<InvalidModelError>(node, "the zero point's shape " + shape_str(*zero_point) +
                                           " differs from the scale's " + shape_str(scale));
  }
  QuantLayout l;
  const int64_t block_size = node.attr_int("block_size", 0);
  if (block_size < 0) node_fail<InvalidModelError>(node, "block_size must be >= 0, got " + std::to_string(block_size));
  const bool one_value = one_value_shape(scale);
  if (block_size == 0 && one_value) {  // per tensor: x as [1, 1, numel]
    l.inner = numel(x);
    return l;
  }
  if (node.opset < 13) {
    node_fail<InvalidModelError>(node, "the scale must be a scalar before opset 13, got " + shape_str(scale));
  }
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank == 0) node_fail<InvalidModelError>(node, "a per-axis or blocked scale " + shape_str(scale) + " needs an x of rank >= 1");
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 1), rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) l.outer *= x[d];
    if (d > axis) l.inner *= x[d];
  }
  l.axis_len = x[axis];
  if (block_size == 0) {
    if (scale.size() != 1 || scale[0] != l.axis_len) {
      node_fail<InvalidModelError>(node, "a per-axis scale must be 1-D of x.shape[axis] = " + std::to_string(l.axis_len) +
                                             " values (x " + shape_str(x) + ", axis " + std::to_string(axis) +
                                             "), got " + shape_str(scale));
    }
    l.granularity = QuantGranularity::PerAxis;
    return l;
  }
  if (node.opset < 21) node_fail<InvalidModelError>(node, "block_size needs opset 21 or later");
  l.granularity = QuantGranularity::Blocked;
  l.block_size = block_size;
  l.blocks = (l.axis_len + block_size - 1) / block_size;
  Shape want = x;
  want[axis] = l.blocks;
  if (scale != want) {
    node_fail<InvalidModelError>(node, "a blocked scale (block_size " + std::to_string(block_size) + ", axis " +
                                           std::to_string(axis) + ") of x " + shape_str(x) + " must be " +
                                           shape_str(want) + ", got " + shape_str(scale));
  }
  return l;
}

}  // namespace dnnx
