// NegativeLogLikelihoodLoss (opset 12; input, target, weight) and SoftmaxCrossEntropyLoss (12;
// scores, labels, weights -> output, log_prob): float scores, int32 or int64 labels, an
// optional float weight [C]; attributes reduction ("mean", "sum" or "none") and ignore_index.
// The meaning is class_loss.h's.
#include "ops/loss/class_loss.h"

#include "ops/const_inputs.h"

namespace dnnx {

namespace {

constexpr int kClassLossOpset = 12;
constexpr size_t kScores = 0, kLabels = 1, kWeight = 2;

LossReduction loss_reduction(const Node& node) {
  const std::string r = node.attr_string("reduction", "mean");
  if (r == "none") return LossReduction::None;
  if (r == "sum") return LossReduction::Sum;
  if (r == "mean") return LossReduction::Mean;
  node_fail<InvalidModelError>(node, "reduction '" + r + "' must be 'none', 'sum' or 'mean'");
}

std::vector<TensorInfo> infer_class_loss(const Node& node, const std::vector<ValueInfo>& inputs, bool softmax) {
  const TensorInfo& x = require_input(node, inputs, kScores, softmax ? "scores" : "input");
  require_float(node, x, softmax ? "input scores" : "input");
  const TensorInfo& t = require_input(node, inputs, kLabels, softmax ? "labels" : "target");
  if (!is_integer(t.dtype)) {
    const std::string what = softmax ? "labels" : "target";
    node_fail<UnsupportedModelError>(node, what + " must be int32 or int64, got " + dtype_name(t.dtype));
  }
  Shape want_t;  // [N, d1..dk]: X's shape without C
  if (x.shape.size() >= 2) {
    want_t = x.shape;
    want_t.erase(want_t.begin() + 1);
  }
  if (x.shape.size() < 2 || t.shape != want_t) {
    node_fail<InvalidModelError>(node, "scores " + shape_str(x.shape) + " must be [N, C] or [N, C, d1..dk] and " +
                                           "labels " + shape_str(t.shape) + " its shape without C, " +
                                           shape_str(want_t));
  }
  if (x.shape[1] == 0) {
    node_fail<InvalidModelError>(node, "scores " + shape_str(x.shape) + " have no classes (C = 0)");
  }
  if (input_present(inputs, kWeight)) {
    const TensorInfo& w = inputs[kWeight].info;
    if (w.dtype != x.dtype || w.shape != Shape{x.shape[1]}) {
      node_fail<InvalidModelError>(node, std::string("weight ") + dtype_name(w.dtype) + " " + shape_str(w.shape) +
                                             " must be " + dtype_name(x.dtype) + " [" + std::to_string(x.shape[1]) +
                                             "] (one per class)");
    }
  }
  std::vector<TensorInfo> out{TensorInfo{loss_reduction(node) == LossReduction::None ? t.shape : Shape{}, x.dtype}};
  if (softmax) out.push_back(x);  // log_prob
  return out;
}

// softmax: SoftmaxCrossEntropyLoss, which has the log_prob output.
OpDef class_loss_op(bool softmax) {
  OpDef def;
  def.min_opset = kClassLossOpset;
  def.validate = [](const Node& node) {
    node.expect_only_attrs({"reduction", "ignore_index"});
    loss_reduction(node);
  };
  def.infer = [softmax](const Node& node, const std::vector<ValueInfo>& inputs) {
    return infer_class_loss(node, inputs, softmax);
  };
  def.untrainable = [](const Node&, const std::vector<ValueInfo>&, const std::vector<bool>& needs_grad) {
    return needs_grad.size() > kWeight && needs_grad[kWeight]
               ? std::string("its class weights carry no gradient (make them a constant, not a trainable tensor)")
               : std::string();
  };
  return def;
}

}  // namespace

ClassLossGeometry class_loss_geometry(const Node& node, const std::vector<ValueInfo>& inputs) {
  const Shape& x = inputs[kScores].info.shape;
  ClassLossGeometry g;
  g.n = x[0];
  g.c = x[1];
  for (size_t i = 2; i < x.size(); ++i) g.d *= x[i];
  g.reduction = loss_reduction(node);
  g.has_ignore_index = node.has_attr("ignore_index");
  g.ignore_index = node.attr_int("ignore_index", 0);
  g.has_weight = input_present(inputs, kWeight);
  g.label_type = inputs[kLabels].info.dtype;
  g.where = node.where();
  return g;
}

void register_class_loss_ops(OpRegistry& r) {
  r.add("NegativeLogLikelihoodLoss", class_loss_op(false));
  r.add("SoftmaxCrossEntropyLoss", class_loss_op(true));
}

}  // namespace dnnx
