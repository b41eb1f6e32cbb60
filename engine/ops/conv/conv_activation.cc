#include "ops/conv/conv_activation.h"

#include <string>

#include "ir/graph.h"
#include "ops/layout/channels_last.h"

namespace dnnx {

ConvActivation conv_activation_of(const Node& node) {
  const std::string op = channels_first_op(node.op_type);
  ConvActivation act;
  if (op == "Conv+Clip") {
    act.kind = ConvActivationKind::Clip;
    act.lo = node.attr_float("clip_min", 0.0f);
    act.hi = node.attr_float("clip_max", 0.0f);
  } else if (op == "Conv+HardSwish") {
    act.kind = ConvActivationKind::HardSwish;
  } else if (op == "Conv+Swish") {
    act.kind = ConvActivationKind::Swish;
  }
  return act;
}

}  // namespace dnnx
