// What the gradients of LeakyRelu, Elu, Selu and Clip read from their node
// (param_activation_grad.h): the same attributes and defaults as the forward (param_activation.cc).
#include "ops/elementwise/param_activation_grad.h"

#include <limits>

namespace dnnx {

namespace {

constexpr int kClipBoundsAsInputsOpset = 11;
constexpr size_t kClipMin = 1, kClipMax = 2;

}  // namespace

ParamActivationGradPlan param_activation_grad_plan(const Node& node, const std::vector<ValueInfo>& inputs,
                                                   const std::vector<bool>& needs_grad) {
  ParamActivationGradPlan plan;
  ParamActivationSlope& s = plan.slope;
  if (node.op_type == "LeakyRelu") {
    s.kind = ParamActivationGrad::LeakyRelu;
    s.alpha = node.attr_float("alpha", 0.01f);
  } else if (node.op_type == "Elu") {
    s.kind = ParamActivationGrad::Elu;
    s.alpha = node.attr_float("alpha", 1.0f);
  } else if (node.op_type == "Selu") {
    s.kind = ParamActivationGrad::Selu;
    s.alpha = node.attr_float("alpha", kSeluAlpha);
    s.gamma = node.attr_float("gamma", kSeluGamma);
  } else {  // Clip
    s.kind = ParamActivationGrad::Clip;
    for (size_t i : {kClipMin, kClipMax}) {
      if (i < needs_grad.size() && needs_grad[i]) {
        node_fail<UnsupportedModelError>(node, std::string("training Clip's ") + (i == kClipMin ? "min" : "max") +
                                                   " input is not supported: it is a bound, not a weight");
      }
    }
    const bool attrs = node.opset < kClipBoundsAsInputsOpset;
    plan.min_input = !attrs && kClipMin < inputs.size() && inputs[kClipMin].present;
    plan.max_input = !attrs && kClipMax < inputs.size() && inputs[kClipMax].present;
    s.lo = attrs ? node.attr_float("min", std::numeric_limits<float>::lowest()) : std::numeric_limits<float>::lowest();
    s.hi = attrs ? node.attr_float("max", std::numeric_limits<float>::max()) : std::numeric_limits<float>::max();
  }
  return plan;
}

}  // namespace dnnx
