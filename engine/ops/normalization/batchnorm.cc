// BatchNormalization, inference form: X [N, C, d...], scale/B/mean/var [C] ->
// Y = (X - mean) / sqrt(var + epsilon) * scale + B, per channel. Training mode (batch statistics,
// running-mean outputs) and the pre-opset-9 spatial=0 form (statistics per activation) are
// refused at load. The fold_batchnorm pass (runtime/passes) removes the op after a constant Conv.
#include "ops/op.h"

namespace dnnx {

namespace {

constexpr size_t kScale = 1, kBias = 2, kMean = 3, kVar = 4;

void validate_batchnorm(const Node& node) {
  node.expect_only_attrs({"epsilon", "momentum", "spatial", "training_mode"});
  if (node.attr_int("training_mode", 0) != 0) {
    node_fail<UnsupportedModelError>(node, "training_mode 1 is not supported (inference only)");
  }
  if (node.attr_int("spatial", 1) != 1) {
    node_fail<UnsupportedModelError>(node, "spatial 0 (statistics per activation) is not supported");
  }
  for (size_t o = 1; o < node.outputs.size(); ++o) {
    if (node.has_output(o)) {
      node_fail<UnsupportedModelError>(node, "output " + std::to_string(o) +
                                                 " (running or saved statistics) is not supported: "
                                                 "inference only");
    }
  }
}

std::vector<TensorInfo> infer_batchnorm(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_float(node, x, "input X");
  if (x.shape.size() < 2) {
    node_fail<InvalidModelError>(node, "X " + shape_str(x.shape) + " must be [N, C, ...]");
  }
  const Shape channels{x.shape[1]};
  const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i : {kScale, kBias, kMean, kVar}) {
    const TensorInfo& p = require_input(node, inputs, i, names[i]);
    require_float(node, p, names[i]);
    if (p.shape != channels) {
      node_fail<InvalidModelError>(node, std::string(names[i]) + " " + shape_str(p.shape) + " must be " +
                                             shape_str(channels) + ", one value per channel of X " +
                                             shape_str(x.shape));
    }
  }
  return {x};
}

}  // namespace

void register_batchnorm_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_batchnorm;
  def.infer = infer_batchnorm;
  // A frozen BN inside a trainable tail trains its scale and bias (and passes the gradient to X);
  // its mean and variance are statistics.
  def.untrainable = [](const Node&, const std::vector<ValueInfo>&, const std::vector<bool>& needs_grad) {
    const bool statistics = needs_grad.size() > kVar && (needs_grad[kMean] || needs_grad[kVar]);
    return statistics ? "training the running mean or variance is not supported (they are statistics, not parameters)"
                      : "";
  };
  r.add("BatchNormalization", std::move(def));
}

}  // namespace dnnx
