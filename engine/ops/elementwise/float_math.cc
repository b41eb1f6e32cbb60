// Sin, Cos, Tan, Asin, Acos, Atan (opset 7), Sinh, Cosh, Asinh, Acosh, Atanh (9), Ceil, Floor
// (6), Round (11), Softsign (1), Celu (12), ThresholdedRelu (10), Swish (24): float in, float
// out. Sign (9) and Shrink (9) take float32, int32 and int64. Output shape = input shape; the
// formulas are ops/elementwise/float_math.h's.
#include "ops/elementwise/float_math.h"

#include <map>

#include "ops/elementwise/elementwise.h"

namespace dnnx {

namespace {

const std::map<std::string, FloatMath>& kinds() {
  static const std::map<std::string, FloatMath> k = {
      {"Sin", FloatMath::Sin},       {"Cos", FloatMath::Cos},     {"Tan", FloatMath::Tan},
      {"Asin", FloatMath::Asin},     {"Acos", FloatMath::Acos},   {"Atan", FloatMath::Atan},
      {"Sinh", FloatMath::Sinh},     {"Cosh", FloatMath::Cosh},   {"Asinh", FloatMath::Asinh},
      {"Acosh", FloatMath::Acosh},   {"Atanh", FloatMath::Atanh}, {"Ceil", FloatMath::Ceil},
      {"Floor", FloatMath::Floor},   {"Round", FloatMath::Round}, {"Softsign", FloatMath::Softsign},
      {"Celu", FloatMath::Celu},     {"ThresholdedRelu", FloatMath::ThresholdedRelu},
      {"Swish", FloatMath::Swish},   {"Sign", FloatMath::Sign},   {"Shrink", FloatMath::Shrink},
  };
  return k;
}

// A float-only op (numbers = false) or one that also takes integers (Sign, Shrink).
OpDef float_math_op(std::vector<std::string> attrs, int min_opset, bool numbers = false) {
  OpDef def;
  def.min_opset = min_opset;
  def.validate = [attrs](const Node& node) {
    node.expect_only_attrs(attrs);
    if (node.op_type == "Celu" && node.attr_float("alpha", 1.0f) == 0.0f) {
      node_fail<InvalidModelError>(node, "alpha must not be 0 (Celu divides by it)");
    }
  };
  def.infer = [numbers](const Node& node, const std::vector<ValueInfo>& inputs) {
    const TensorInfo& x = require_input(node, inputs, 0, "X");
    if (numbers) {
      require_element_type(node, x, ElementTypes::Numbers, "input X");
    } else {
      require_float(node, x, "input X");
    }
    return std::vector<TensorInfo>{x};
  };
  return def;
}

}  // namespace

FloatMath float_math_kind(const Node& node) { return kinds().at(node.op_type); }

FloatMathParams float_math_params(const Node& node) {
  FloatMathParams p;
  p.alpha = node.attr_float("alpha", 1.0f);
  p.lambd = node.attr_float("lambd", 0.5f);
  p.bias = node.attr_float("bias", 0.0f);
  return p;
}

bool float_math_differentiable(FloatMath k) {
  return k != FloatMath::Ceil && k != FloatMath::Floor && k != FloatMath::Round && k != FloatMath::Sign;
}

void register_float_math_ops(OpRegistry& r) {
  constexpr int kTrigOpset = 7, kHyperbolicOpset = 9, kRoundOpset = 11, kCeluOpset = 12;
  constexpr int kThresholdedReluOpset = 10, kSwishOpset = 24, kSignShrinkOpset = 9;
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan"}) r.add(op, float_math_op({}, kTrigOpset));
  for (const char* op : {"Sinh", "Cosh", "Asinh", "Acosh", "Atanh"}) r.add(op, float_math_op({}, kHyperbolicOpset));
  r.add("Ceil", float_math_op({}, 6));
  r.add("Floor", float_math_op({}, 6));
  r.add("Round", float_math_op({}, kRoundOpset));
  r.add("Softsign", float_math_op({}, 1));
  r.add("Celu", float_math_op({"alpha"}, kCeluOpset));
  r.add("ThresholdedRelu", float_math_op({"alpha"}, kThresholdedReluOpset));
  r.add("Swish", float_math_op({"alpha"}, kSwishOpset));
  r.add("Sign", float_math_op({}, kSignShrinkOpset, true));
  r.add("Shrink", float_math_op({"lambd", "bias"}, kSignShrinkOpset, true));
}

}  // namespace dnnx
