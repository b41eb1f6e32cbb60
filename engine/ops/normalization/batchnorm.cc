// BatchNormalization: X [N, C, d...], scale/B/input_mean/input_var [C] ->
// Y = (X - mean) / sqrt(var + epsilon) * scale + B, per channel. Inference form: mean and var are
// the inputs. Training mode (training_mode=1, opset 14+): mean and var are the batch's (over N and
// d..., the population variance), and the optional outputs running_mean = input_mean * momentum +
// mean * (1 - momentum) and running_var likewise (momentum 0.9 by default), as onnxruntime; it
// runs on the host (a device plan falls back). The pre-opset-9 spatial=0 form (statistics per
// activation) is refused at load. The fold_batchnorm pass (runtime/passes) removes an
// inference-form op after a constant Conv.
#include "ops/normalization/batchnorm.h"

namespace dnnx {

namespace {

constexpr size_t kScale = 1, kBias = 2, kMean = 3, kVar = 4;

void validate_batchnorm(const Node& node) {
  node.expect_only_attrs({"epsilon", "momentum", "spatial", "training_mode"});
  const int64_t mode = node.attr_int("training_mode", 0);
  if (mode != 0 && mode != 1) {
    node_fail<InvalidModelError>(node, "training_mode must be 0 or 1, got " + std::to_string(mode));
  }
  if (node.attr_int("spatial", 1) != 1) {
    node_fail<UnsupportedModelError>(node, "spatial 0 (statistics per activation) is not supported");
  }
  const bool training = batchnorm_training(node);
  for (size_t o = 1; o < node.outputs.size(); ++o) {
    if (node.has_output(o) && (!training || o > 2)) {
      node_fail<UnsupportedModelError>(node, "output " + std::to_string(o) +
                                                 (training ? " (saved statistics, before opset 14) is not supported"
                                                           : " (running statistics) needs training_mode=1"));
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
  if (!batchnorm_training(node)) return {x};
  const TensorInfo stats{channels, x.dtype};
  return {x, stats, stats};
}

}  // namespace

bool batchnorm_training(const Node& node) { return node.attr_int("training_mode", 0) != 0; }

void register_batchnorm_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_batchnorm;
  def.infer = infer_batchnorm;
  // A frozen BN inside a trainable tail trains its scale and bias (and passes the gradient to X);
  // its mean and variance are statistics.
  def.untrainable = [](const Node& node, const std::vector<ValueInfo>&, const std::vector<bool>& needs_grad) {
    if (batchnorm_training(node)) return "training_mode=1 (batch statistics) has no gradient here";
    const bool statistics = needs_grad.size() > kVar && (needs_grad[kMean] || needs_grad[kVar]);
    return statistics ? "training the running mean or variance is not supported (they are statistics, not parameters)"
                      : "";
  };
  r.add("BatchNormalization", std::move(def));
}

}  // namespace dnnx
