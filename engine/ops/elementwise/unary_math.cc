// Exp, Log, Sqrt, Reciprocal, Erf, Gelu, HardSigmoid, HardSwish, Softplus, Mish: elementwise,
// float32 in and out (float16 under precision="fp16"), output shape = input shape. Their
// formulas are ops/elementwise/unary_math.h's, read by every backend.
//   Gelu         opset 20; approximate "none" (0.5 x (1 + erf(x / sqrt 2))) or "tanh"
//   HardSigmoid  max(0, min(1, alpha x + beta)), alpha 0.2, beta 0.5
//   HardSwish    x * HardSigmoid(x) with alpha 1/6, beta 0.5 (opset 14)
//   Mish         x * tanh(softplus(x)) (opset 18)
#include "ops/elementwise/unary_math.h"

#include <map>

#include "ops/op.h"

namespace dnnx {

namespace {

const std::map<std::string, UnaryMath>& kinds() {
  static const std::map<std::string, UnaryMath> k = {
      {"Exp", UnaryMath::Exp},           {"Log", UnaryMath::Log},
      {"Sqrt", UnaryMath::Sqrt},         {"Reciprocal", UnaryMath::Reciprocal},
      {"Erf", UnaryMath::Erf},           {"Gelu", UnaryMath::Gelu},
      {"HardSigmoid", UnaryMath::HardSigmoid}, {"HardSwish", UnaryMath::HardSwish},
      {"Softplus", UnaryMath::Softplus}, {"Mish", UnaryMath::Mish},
      {"Abs", UnaryMath::Abs},
  };
  return k;
}

OpDef unary_math_op(std::vector<std::string> attrs, int min_opset) {
  OpDef def;
  def.min_opset = min_opset;
  def.validate = [attrs](const Node& node) {
    node.expect_only_attrs(attrs);
    if (node.op_type == "Gelu") {
      const std::string approximate = node.attr_string("approximate", "none");
      if (approximate != "none" && approximate != "tanh") {
        node_fail<InvalidModelError>(node, "approximate '" + approximate + "' is neither 'none' nor 'tanh'");
      }
    }
  };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const TensorInfo& x = require_input(node, inputs, 0, "X");
    require_float(node, x, "input X");
    return std::vector<TensorInfo>{x};
  };
  return def;
}

}  // namespace

UnaryMath unary_math_kind(const Node& node) {
  const UnaryMath k = kinds().at(node.op_type);
  if (k == UnaryMath::Gelu && node.attr_string("approximate", "none") == "tanh") return UnaryMath::GeluTanh;
  return k;
}

UnaryParams unary_math_params(const Node& node) {
  UnaryParams p;
  if (node.op_type == "HardSigmoid") {
    p.alpha = node.attr_float("alpha", 0.2f);
    p.beta = node.attr_float("beta", 0.5f);
  }
  return p;
}

void register_unary_math_ops(OpRegistry& r) {
  constexpr int kErfOpset = 9, kHardSwishOpset = 14, kMishOpset = 18, kGeluOpset = 20;
  for (const char* op : {"Exp", "Log", "Sqrt", "Reciprocal", "Softplus"}) r.add(op, unary_math_op({}, 7));
  r.add("Erf", unary_math_op({}, kErfOpset));
  r.add("HardSigmoid", unary_math_op({"alpha", "beta"}, 7));
  r.add("HardSwish", unary_math_op({}, kHardSwishOpset));
  r.add("Mish", unary_math_op({}, kMishOpset));
  r.add("Gelu", unary_math_op({"approximate"}, kGeluOpset));
}

}  // namespace dnnx
