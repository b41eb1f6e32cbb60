// CenterCropPad (opset 18): input_data [d...] (any dtype), shape (int32 / int64 [len(axes)], a
// value input) -> input_data cropped or zero-padded about its centre to `shape` along `axes`
// (ops/layout/center_crop_pad.h).
#include "ops/layout/center_crop_pad.h"

#include "ops/const_inputs.h"

namespace dnnx {

std::vector<CropPadDim> center_crop_pad_dims(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input_data");
  const std::vector<int64_t> sizes = constant_ints(node, inputs, 1, "shape");
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> axes;
  if (node.has_attr("axes")) {
    for (int64_t a : node.attr_ints("axes", {})) axes.push_back(normalize_axis(node, a, rank));
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (sizes.size() != axes.size()) {
    node_fail<InvalidModelError>(node, "shape has " + std::to_string(sizes.size()) + " values for " +
                                           std::to_string(axes.size()) + " axes of input " + shape_str(x.shape));
  }
  std::vector<CropPadDim> dims(x.shape.size());
  std::vector<bool> seen(x.shape.size(), false);
  for (size_t d = 0; d < dims.size(); ++d) dims[d] = {x.shape[d], 0, 0, x.shape[d]};
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i], want = sizes[i], have = x.shape[a];
    if (seen[a]) node_fail<InvalidModelError>(node, "axes name dim " + std::to_string(a) + " twice");
    seen[a] = true;
    if (want < 0) node_fail<InvalidModelError>(node, "shape has a negative size " + std::to_string(want));
    if (want <= have) {
      dims[a] = {want, (have - want) / 2, 0, want};
    } else {
      dims[a] = {want, 0, (want - have) / 2, have};
    }
  }
  return dims;
}

namespace {

std::vector<TensorInfo> infer_center_crop_pad(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input_data");
  Shape out;
  for (const CropPadDim& d : center_crop_pad_dims(node, inputs)) out.push_back(d.out);
  return {TensorInfo{out, x.dtype}};
}

}  // namespace

void register_center_crop_pad_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({"axes"}); };
  def.infer = infer_center_crop_pad;
  def.value_inputs = {1};
  def.min_opset = 18;
  r.add("CenterCropPad", std::move(def));
}

}  // namespace dnnx
