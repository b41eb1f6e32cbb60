// Elementwise activations with parameters:
//   LeakyRelu  y = x >= 0 ? x : alpha * x          (alpha 0.01; float32)
//   Elu        y = x >= 0 ? x : alpha * (e^x - 1)  (alpha 1.0; float32)
//   Selu       y = gamma * (x > 0 ? x : alpha * (e^x - 1))  (alpha 1.6732632, gamma 1.0507010; float32)
//   Clip       y = min(max(x, min), max)           (float types; every integer type from opset 12)
// Clip's bounds are attributes before opset 11 and optional scalar inputs from 11 on; the
// inputs may be constants or computed, since the kernel reads them when it runs. With
// min > max every element becomes max, as ONNX specifies.
#include "ops/const_inputs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

constexpr int kClipBoundsAsInputsOpset = 11;
constexpr size_t kClipMin = 1, kClipMax = 2;

OpDef alpha_activation_op(bool gamma = false) {
  OpDef def;
  if (gamma) {
    def.validate = [](const Node& node) { node.expect_only_attrs({"alpha", "gamma"}); };
  } else {
    def.validate = [](const Node& node) { node.expect_only_attrs({"alpha"}); };
  }
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const TensorInfo& x = require_input(node, inputs, 0, "X");
    require_float(node, x, "input X");
    return std::vector<TensorInfo>{x};
  };
  return def;
}

void validate_clip(const Node& node) {
  if (node.opset < kClipBoundsAsInputsOpset) {
    node.expect_only_attrs({"min", "max"});
  } else {
    node.expect_only_attrs({});
  }
}

std::vector<TensorInfo> infer_clip(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  if (node.opset < kClipBoundsAsInputsOpset) {
    require_float(node, x, "input");
    if (inputs.size() > 1) {
      node_fail<InvalidModelError>(node, "takes one input before opset 11 (min and max are attributes)");
    }
  }
  if (input_present(inputs, kClipMin)) require_scalar(node, inputs, kClipMin, x.dtype, "min");
  if (input_present(inputs, kClipMax)) require_scalar(node, inputs, kClipMax, x.dtype, "max");
  return {x};
}

}  // namespace

void register_param_activation_ops(OpRegistry& r) {
  r.add("LeakyRelu", alpha_activation_op());
  r.add("Elu", alpha_activation_op());
  r.add("Selu", alpha_activation_op(/*gamma=*/true));
  OpDef clip;
  clip.validate = validate_clip;
  clip.infer = infer_clip;
  r.add("Clip", std::move(clip));
}

}  // namespace dnnx
