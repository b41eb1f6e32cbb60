// "Conv+Add+Relu", made by the fuse_conv_add_relu pass (runtime/passes): a residual block's
// Relu(Conv(x, w, b) + z), where z has the conv output's shape. Inputs [x, w, b or "", z]; the
// conv's attributes; the Relu's output. On CUDA one cudnnConvolutionBiasActivationForward
// (y = relu(conv(x) + z + b)), on the CPU the conv kernel's epilogue, instead of three passes
// over the block's output.
#include "ops/op.h"

namespace dnnx {

namespace {

constexpr size_t kResidualInput = 3;

// The node as the plain Conv it contains (its first three inputs).
Node conv_part(const Node& fused) {
  Node conv = fused;
  conv.op_type = "Conv";
  conv.inputs.resize(kResidualInput);
  while (!conv.inputs.empty() && conv.inputs.back().empty()) conv.inputs.pop_back();
  return conv;
}

}  // namespace

void register_conv_add_relu_ops(OpRegistry& r) {
  const OpDef* conv = r.find("Conv");
  OpDef def;
  def.fused = true;
  def.validate = [conv](const Node& node) {
    if (node.inputs.size() != kResidualInput + 1 || !node.has_input(kResidualInput)) {
      node_fail<InvalidModelError>(node, "Conv+Add+Relu takes x, w, b (or none) and the residual z");
    }
    conv->validate(conv_part(node));
  };
  def.infer = [conv](const Node& node, const std::vector<ValueInfo>& inputs) {
    const std::vector<ValueInfo> conv_inputs(inputs.begin(), inputs.begin() + kResidualInput);
    std::vector<TensorInfo> out = conv->infer(conv_part(node), conv_inputs);
    const TensorInfo& z = require_input(node, inputs, kResidualInput, "residual z");
    if (z.shape != out[0].shape || z.dtype != out[0].dtype) {
      node_fail<InvalidModelError>(node, "the residual z " + z.str() + " must have the conv output's type " +
                                             out[0].str());
    }
    return out;
  };
  r.add("Conv+Add+Relu", std::move(def));
}

}  // namespace dnnx
