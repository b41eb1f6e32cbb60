// Col2Im's meaning (ops/conv/col2im.h).
#include "ops/conv/col2im.h"

#include "ops/const_inputs.h"

namespace dnnx {

namespace {

constexpr int kCol2ImOpset = 18;

std::vector<TensorInfo> infer_col2im(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  require_float(node, x, "input");
  const Col2ImGeometry g = col2im_geometry(node, inputs);
  Shape y = {g.batch, g.channels};
  y.insert(y.end(), g.image.begin(), g.image.end());
  return {TensorInfo{y, x.dtype}};
}

}  // namespace

Col2ImGeometry col2im_geometry(const Node& node, const std::vector<ValueInfo>& inputs) {
  Col2ImGeometry g;
  const Shape& x = inputs[0].info.shape;
  g.image = constant_ints(node, inputs, 1, "image_shape");
  g.block = constant_ints(node, inputs, 2, "block_shape");
  const size_t r = g.image.size();
  if (r == 0 || g.block.size() != r) {
    node_fail<InvalidModelError>(node, "image_shape " + shape_str(g.image) + " and block_shape " + shape_str(g.block) +
                                           " must have one value per spatial dim");
  }
  g.strides = attr_ints_of_size(node, "strides", r, 1);
  g.dilations = attr_ints_of_size(node, "dilations", r, 1);
  const Shape pads = attr_ints_of_size(node, "pads", 2 * r, 0);
  g.pads_begin.assign(pads.begin(), pads.begin() + r);
  if (x.size() != 3) node_fail<InvalidModelError>(node, "input " + shape_str(x) + " must be [N, C * prod(block), L]");
  const int64_t block_size = numel(g.block);
  if (block_size <= 0 || x[1] % block_size != 0) {
    node_fail<InvalidModelError>(node, "input " + shape_str(x) + ": dim 1 is not a multiple of the block size " +
                                           std::to_string(block_size) + " of block_shape " + shape_str(g.block));
  }
  g.batch = x[0];
  g.channels = x[1] / block_size;
  int64_t positions = 1;
  for (size_t d = 0; d < r; ++d) {
    if (g.strides[d] <= 0 || g.dilations[d] <= 0 || g.image[d] < 0 || pads[d] < 0 || pads[r + d] < 0) {
      node_fail<InvalidModelError>(node, "strides, dilations, pads and image_shape must be positive (dim " +
                                             std::to_string(d) + ")");
    }
    const int64_t span = (g.block[d] - 1) * g.dilations[d] + 1;
    const int64_t room = g.image[d] + pads[d] + pads[r + d] - span;
    if (room < 0) {
      node_fail<InvalidModelError>(node, "block_shape " + shape_str(g.block) + " does not fit image_shape " +
                                             shape_str(g.image) + " with its pads and dilations");
    }
    g.blocks.push_back(room / g.strides[d] + 1);
    positions *= g.blocks.back();
  }
  if (x[2] != positions) {
    node_fail<InvalidModelError>(node, "input " + shape_str(x) + " has " + std::to_string(x[2]) +
                                           " block positions, image_shape and block_shape give " +
                                           std::to_string(positions));
  }
  return g;
}

void register_col2im_ops(OpRegistry& r) {
  OpDef def;
  def.min_opset = kCol2ImOpset;
  def.validate = [](const Node& node) { node.expect_only_attrs({"dilations", "pads", "strides"}); };
  def.infer = infer_col2im;
  def.value_inputs = {1, 2};
  r.add("Col2Im", std::move(def));
}

}  // namespace dnnx
