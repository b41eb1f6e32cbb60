// LinearAttention's meaning (ops/attention/linear_attention.h): attributes, the shapes of its
// inputs and outputs, and the errors that name them.
#include "ops/attention/linear_attention.h"

#include <cmath>

#include "ops/const_inputs.h"

namespace dnnx {

namespace {

using namespace linear_attention_slot;

constexpr int kLinearAttentionOpset = 27;

// The schema's type list for T and S: float32, float16, bfloat16 (no float64).
void require_attention_float(const Node& node, const TensorInfo& t, const char* what) {
  if (t.dtype != DType::Float32 && t.dtype != DType::Float16 && t.dtype != DType::BFloat16) {
    node_fail<UnsupportedModelError>(node, std::string(what) + " must be float32, float16 or bfloat16, got " +
                                               dtype_name(t.dtype));
  }
}

void validate_linear_attention(const Node& node) {
  node.expect_only_attrs({"chunk_size", "kv_num_heads", "q_num_heads", "scale", "update_rule"});
  const std::string rule = node.attr_string("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta") {
    node_fail<InvalidModelError>(node, "update_rule '" + rule + "' is not one of linear, gated, delta, gated_delta");
  }
  if (!node.has_attr("q_num_heads") || !node.has_attr("kv_num_heads")) {
    node_fail<InvalidModelError>(node, "the attributes q_num_heads and kv_num_heads are required");
  }
  const int64_t q = node.attr_int("q_num_heads", 0), kv = node.attr_int("kv_num_heads", 0);
  if (q <= 0 || kv <= 0 || q % kv != 0) {
    node_fail<InvalidModelError>(node, "q_num_heads (" + std::to_string(q) + ") must be a positive multiple of kv_num_heads (" +
                                           std::to_string(kv) + ")");
  }
  const bool gated = rule == "gated" || rule == "gated_delta", delta = rule == "delta" || rule == "gated_delta";
  if (gated != node.has_input(kDecay)) {
    node_fail<InvalidModelError>(node, "update_rule '" + rule + (gated ? "' requires" : "' forbids") + " the input decay");
  }
  if (delta != node.has_input(kBeta)) {
    node_fail<InvalidModelError>(node, "update_rule '" + rule + (delta ? "' requires" : "' forbids") + " the input beta");
  }
}

// The head size of a packed [B, T, heads*D] tensor.
int64_t packed_head(const Node& node, const char* what, const Shape& s, int64_t heads) {
  if (s[2] % heads != 0) {
    node_fail<InvalidModelError>(node, std::string(what) + " " + shape_str(s) + ": its last dim " + std::to_string(s[2]) +
                                           " is not a multiple of the " + std::to_string(heads) + " heads");
  }
  return s[2] / heads;
}

// [batch, tokens, one of `lasts`]: returns the index of the last dim taken.
size_t require_per_token(const Node& node, const char* what, const TensorInfo& t, const LinearAttentionGeometry& g,
                         std::vector<int64_t> lasts, const std::string& meaning) {
  if (t.shape.size() == 3 && t.shape[0] == g.batch && t.shape[1] == g.tokens) {
    for (size_t i = 0; i < lasts.size(); ++i) {
      if (t.shape[2] == lasts[i]) return i;
    }
  }
  node_fail<InvalidModelError>(node, std::string(what) + " " + shape_str(t.shape) + " must be [" +
                                         std::to_string(g.batch) + ", " + std::to_string(g.tokens) + ", " + meaning + "]");
  return 0;
}

std::vector<TensorInfo> infer_linear_attention(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& q = require_input(node, inputs, kQuery, "query");
  require_attention_float(node, q, "query");
  const LinearAttentionGeometry g = linear_attention_geometry(node, inputs);
  DType state_type = q.dtype;
  if (g.has_past) {
    const TensorInfo& s = inputs[kPastState].info;
    require_attention_float(node, s, "past_state");
    state_type = s.dtype;
  }
  return {TensorInfo{{g.batch, g.tokens, g.q_heads * g.value_head}, q.dtype},
          TensorInfo{{g.batch, g.kv_heads, g.key_head, g.value_head}, state_type}};
}

}  // namespace

LinearAttentionGeometry linear_attention_geometry(const Node& node, const std::vector<ValueInfo>& inputs) {
  LinearAttentionGeometry g;
  const TensorInfo& q = require_input(node, inputs, kQuery, "query");
  const TensorInfo& k = require_input(node, inputs, kKey, "key");
  const TensorInfo& v = require_input(node, inputs, kValue, "value");
  for (const TensorInfo* t : {&q, &k, &v}) {
    const char* what = t == &q ? "query" : t == &k ? "key" : "value";
    if (t->shape.size() != 3) {
      node_fail<InvalidModelError>(node, std::string(what) + " " + shape_str(t->shape) + " must be 3-D [B, T, heads*D]");
    }
    if (t->dtype != q.dtype) node_fail<InvalidModelError>(node, std::string(what) + " must have query's dtype");
  }
  g.q_heads = node.attr_int("q_num_heads", 0);
  g.kv_heads = node.attr_int("kv_num_heads", 0);
  g.batch = q.shape[0];
  g.tokens = q.shape[1];
  g.key_head = packed_head(node, "query", q.shape, g.q_heads);
  g.value_head = packed_head(node, "value", v.shape, g.kv_heads);
  const std::string bt = "[" + std::to_string(g.batch) + ", " + std::to_string(g.tokens) + ", ";
  if (k.shape != Shape{g.batch, g.tokens, g.kv_heads * g.key_head}) {
    node_fail<InvalidModelError>(node, "key " + shape_str(k.shape) + " must be " + bt +
                                           "kv_num_heads * query's head size " + std::to_string(g.kv_heads * g.key_head) + "]");
  }
  if (v.shape[0] != g.batch || v.shape[1] != g.tokens) {
    node_fail<InvalidModelError>(node, "value " + shape_str(v.shape) + " must have query's batch and length " + bt + "...]");
  }
  const std::string rule = node.attr_string("update_rule", "gated_delta");
  g.gated = rule == "gated" || rule == "gated_delta";
  g.delta = rule == "delta" || rule == "gated_delta";
  if (input_present(inputs, kPastState)) {
    const TensorInfo& s = inputs[kPastState].info;
    const Shape want{g.batch, g.kv_heads, g.key_head, g.value_head};
    if (s.shape != want) {
      node_fail<InvalidModelError>(node, "past_state " + shape_str(s.shape) + " must be [B, kv_num_heads, Dk, Dv] " +
                                             shape_str(want));
    }
    g.has_past = true;
  }
  if (g.gated) {
    const TensorInfo& d = require_input(node, inputs, kDecay, "decay");
    if (d.dtype != q.dtype) node_fail<InvalidModelError>(node, "decay must have query's dtype");
    g.decay_per_key = require_per_token(node, "decay", d, g, {g.kv_heads, g.kv_heads * g.key_head},
                                        "kv_num_heads or kv_num_heads * Dk") == 1;
  }
  if (g.delta) {
    const TensorInfo& b = require_input(node, inputs, kBeta, "beta");
    if (b.dtype != q.dtype) node_fail<InvalidModelError>(node, "beta must have query's dtype");
    g.beta_shared = require_per_token(node, "beta", b, g, {g.kv_heads, 1}, "kv_num_heads or 1") == 1;
  }
  const float scale = node.attr_float("scale", 0.0f);
  g.scale = scale != 0.0f ? scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(g.key_head)));
  return g;
}

void register_linear_attention_ops(OpRegistry& r) {
  OpDef def;
  def.min_opset = kLinearAttentionOpset;
  def.validate = validate_linear_attention;
  def.infer = infer_linear_attention;
  r.add("LinearAttention", std::move(def));
}

}  // namespace dnnx
