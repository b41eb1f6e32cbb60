// CausalConvWithState's meaning (ops/conv/causal_conv_with_state.h): the activation, the shapes
// of its inputs and outputs, and the errors that name them.
#include "ops/conv/causal_conv_with_state.h"

#include "ops/const_inputs.h"

namespace dnnx {

namespace {

using namespace causal_conv_slot;

constexpr int kCausalConvOpset = 27;

void validate_causal_conv(const Node& node) {
  node.expect_only_attrs({"activation"});
  const std::string act = node.attr_string("activation", "none");
  if (act != "none" && act != "silu" && act != "swish") {
    node_fail<InvalidModelError>(node, "activation '" + act + "' is not one of none, silu, swish");
  }
}

std::vector<TensorInfo> infer_causal_conv(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, kInput, "input");
  if (x.dtype != DType::Float32 && x.dtype != DType::Float16 && x.dtype != DType::BFloat16) {
    node_fail<UnsupportedModelError>(node, std::string("input must be float32, float16 or bfloat16, got ") +
                                               dtype_name(x.dtype));
  }
  const CausalConvGeometry g = causal_conv_geometry(node, inputs);
  return {TensorInfo{x.shape, x.dtype}, TensorInfo{{g.batch, g.channels, g.kernel - 1}, x.dtype}};
}

}  // namespace

CausalConvGeometry causal_conv_geometry(const Node& node, const std::vector<ValueInfo>& inputs) {
  CausalConvGeometry g;
  const TensorInfo& x = require_input(node, inputs, kInput, "input");
  const TensorInfo& w = require_input(node, inputs, kWeight, "weight");
  if (x.shape.size() != 3) {
    node_fail<InvalidModelError>(node, "input " + shape_str(x.shape) + " must be 3-D [batch, channels, length]");
  }
  g.batch = x.shape[0];
  g.channels = x.shape[1];
  g.length = x.shape[2];
  if (w.dtype != x.dtype) node_fail<InvalidModelError>(node, "weight must have input's dtype");
  if (w.shape.size() != 3 || w.shape[0] != g.channels || w.shape[1] != 1 || w.shape[2] < 1) {
    node_fail<InvalidModelError>(node, "weight " + shape_str(w.shape) + " must be [channels " +
                                           std::to_string(g.channels) + ", 1, k] with k >= 1");
  }
  g.kernel = w.shape[2];
  if (input_present(inputs, kBias)) {
    const TensorInfo& b = inputs[kBias].info;
    if (b.dtype != x.dtype) node_fail<InvalidModelError>(node, "bias must have input's dtype");
    if (b.shape != Shape{g.channels}) {
      node_fail<InvalidModelError>(node, "bias " + shape_str(b.shape) + " must be [channels " +
                                             std::to_string(g.channels) + "]");
    }
    g.has_bias = true;
  }
  if (input_present(inputs, kPastState)) {
    const TensorInfo& p = inputs[kPastState].info;
    if (p.dtype != x.dtype) node_fail<InvalidModelError>(node, "past_state must have input's dtype");
    const Shape want{g.batch, g.channels, g.kernel - 1};
    if (p.shape != want) {
      node_fail<InvalidModelError>(node, "past_state " + shape_str(p.shape) + " must be [batch, channels, k-1] " +
                                             shape_str(want));
    }
    g.has_past = true;
  }
  g.silu = node.attr_string("activation", "none") != "none";
  return g;
}

void register_causal_conv_with_state_ops(OpRegistry& r) {
  OpDef def;
  def.min_opset = kCausalConvOpset;
  def.validate = validate_causal_conv;
  def.infer = infer_causal_conv;
  r.add("CausalConvWithState", std::move(def));
}

}  // namespace dnnx
