// Attention's meaning (ops/attention/attention.h): attributes per opset, the shapes of its
// inputs and outputs, and the errors that name them.
#include "ops/attention/attention.h"

#include <cmath>

#include "ops/const_inputs.h"

namespace dnnx {

namespace {

using namespace attention_slot;

constexpr int kAttentionOpset = 23, kNonpadOpset = 24, kWindowOpset = 25;

void validate_attention(const Node& node) {
  std::vector<std::string> known = {"is_causal", "kv_num_heads", "q_num_heads", "qk_matmul_output_mode",
                                    "scale", "softcap", "softmax_precision"};
  if (node.opset >= kWindowOpset) known.insert(known.end(), {"left_window_size", "right_window_size"});
  node.expect_only_attrs(known);
  const int64_t mode = node.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) {
    node_fail<InvalidModelError>(node, "qk_matmul_output_mode " + std::to_string(mode) + " is not one of 0, 1, 2, 3");
  }
  for (const char* side : {"left_window_size", "right_window_size"}) {
    if (node.attr_int(side, -1) < -1) {
      node_fail<InvalidModelError>(node, std::string(side) + " must be -1 or nonnegative, got " +
                                             std::to_string(node.attr_int(side, -1)));
    }
  }
  if (node.has_input(kNonpad) && node.opset < kNonpadOpset) {
    node_fail<InvalidModelError>(node, "input nonpad_kv_seqlen needs opset 24, the model imports " +
                                           std::to_string(node.opset));
  }
  if (node.has_input(kPastKey) != node.has_input(kPastValue)) {
    node_fail<InvalidModelError>(node, "past_key and past_value must be given together");
  }
  if (node.has_input(kNonpad) && node.has_input(kPastKey)) {
    node_fail<InvalidModelError>(node, "nonpad_kv_seqlen cannot be combined with past_key and past_value");
  }
}

void require_rank(const Node& node, const TensorInfo& t, size_t rank, const char* what) {
  if (t.shape.size() != rank) {
    node_fail<InvalidModelError>(node, std::string(what) + " " + shape_str(t.shape) + " must have rank " +
                                           std::to_string(rank) + " like Q");
  }
}

void require_dim(const Node& node, const char* what, const Shape& s, size_t d, int64_t want, const char* meaning) {
  if (s[d] != want) {
    node_fail<InvalidModelError>(node, std::string(what) + " " + shape_str(s) + ": dim " + std::to_string(d) +
                                           " is " + std::to_string(s[d]) + ", expected " + meaning + " " +
                                           std::to_string(want));
  }
}

// Heads from a packed hidden size: hidden must be heads * head.
int64_t head_size(const Node& node, const char* what, const Shape& s, int64_t heads) {
  if (heads <= 0 || s[2] % heads != 0) {
    node_fail<InvalidModelError>(node, std::string(what) + " " + shape_str(s) + ": its hidden size " +
                                           std::to_string(s[2]) + " is not a multiple of the " +
                                           std::to_string(heads) + " heads");
  }
  return s[2] / heads;
}

void read_qkv(const Node& node, const Shape& q, const Shape& k, const Shape& v, AttentionGeometry& g) {
  g.batch = q[0];
  if (g.packed) {
    if (!node.has_attr("q_num_heads") || !node.has_attr("kv_num_heads")) {
      node_fail<InvalidModelError>(node, "3-D Q, K and V need the attributes q_num_heads and kv_num_heads");
    }
    g.q_heads = node.attr_int("q_num_heads", 0);
    g.kv_heads = node.attr_int("kv_num_heads", 0);
    g.q_seq = q[1];
    g.kv_new = k[1];
    g.head = head_size(node, "Q", q, g.q_heads);
    if (head_size(node, "K", k, g.kv_heads) != g.head) {
      node_fail<InvalidModelError>(node, "K " + shape_str(k) + " must have Q's head size " + std::to_string(g.head));
    }
    g.v_head = head_size(node, "V", v, g.kv_heads);
    require_dim(node, "V", v, 1, g.kv_new, "K's sequence length");
  } else {
    if (node.opset >= kWindowOpset && (node.has_attr("q_num_heads") || node.has_attr("kv_num_heads"))) {
      node_fail<InvalidModelError>(node, "q_num_heads and kv_num_heads must not be given for 4-D inputs");
    }
    g.q_heads = q[1];
    g.kv_heads = k[1];
    g.q_seq = q[2];
    g.kv_new = k[2];
    g.head = q[3];
    require_dim(node, "K", k, 3, g.head, "Q's head size");
    require_dim(node, "V", v, 1, g.kv_heads, "K's heads");
    require_dim(node, "V", v, 2, g.kv_new, "K's sequence length");
    g.v_head = v[3];
  }
  require_dim(node, "K", k, 0, g.batch, "Q's batch");
  require_dim(node, "V", v, 0, g.batch, "Q's batch");
  if (g.kv_heads <= 0 || g.q_heads % g.kv_heads != 0) {
    node_fail<InvalidModelError>(node, "Q's " + std::to_string(g.q_heads) + " heads are not a multiple of the " +
                                           std::to_string(g.kv_heads) + " key/value heads");
  }
}

void read_past(const Node& node, const std::vector<ValueInfo>& inputs, DType dtype, AttentionGeometry& g) {
  const TensorInfo& pk = require_input(node, inputs, kPastKey, "past_key");
  const TensorInfo& pv = require_input(node, inputs, kPastValue, "past_value");
  for (const TensorInfo* t : {&pk, &pv}) {
    const char* what = t == &pk ? "past_key" : "past_value";
    if (t->dtype != dtype) node_fail<InvalidModelError>(node, std::string(what) + " must have Q's dtype");
    if (t->shape.size() != 4) {
      node_fail<InvalidModelError>(node, std::string(what) + " " + shape_str(t->shape) +
                                             " must be [batch, kv_num_heads, past_sequence_length, head_size]");
    }
    require_dim(node, what, t->shape, 0, g.batch, "the batch");
    require_dim(node, what, t->shape, 1, g.kv_heads, "the key/value heads");
    require_dim(node, what, t->shape, 3, t == &pk ? g.head : g.v_head, "the head size");
  }
  g.past = pk.shape[2];
  require_dim(node, "past_value", pv.shape, 2, g.past, "past_key's length");
  g.has_past = true;
}

void read_mask(const Node& node, const std::vector<ValueInfo>& inputs, DType dtype, AttentionGeometry& g) {
  const TensorInfo& m = require_input(node, inputs, kMask, "attn_mask");
  if (m.dtype != DType::Bool && m.dtype != dtype) {
    node_fail<InvalidModelError>(node, std::string("attn_mask must be bool or Q's type ") + dtype_name(dtype) +
                                           ", got " + dtype_name(m.dtype));
  }
  if (m.shape.empty() || m.shape.size() > 4) {
    node_fail<InvalidModelError>(node, "attn_mask " + shape_str(m.shape) + " must have rank 1 to 4");
  }
  g.has_mask = true;
  g.mask_bool = m.dtype == DType::Bool;
  g.mask4 = Shape(4 - m.shape.size(), 1);
  g.mask4.insert(g.mask4.end(), m.shape.begin(), m.shape.end());
  const int64_t want[4] = {g.batch, g.q_heads, g.q_seq, g.total()};
  const char* names[4] = {"the batch", "Q's heads", "Q's sequence length", "the total key length"};
  for (int d = 0; d < 3; ++d) {
    if (g.mask4[d] != 1 && g.mask4[d] != want[d]) {
      node_fail<InvalidModelError>(node, "attn_mask " + shape_str(m.shape) + " does not broadcast to [" +
                                             std::to_string(g.batch) + ", " + std::to_string(g.q_heads) + ", " +
                                             std::to_string(g.q_seq) + ", " + std::to_string(g.total()) + "] (" +
                                             names[d] + ")");
    }
  }
  if (g.mask4[3] > g.total()) {
    node_fail<InvalidModelError>(node, "attn_mask " + shape_str(m.shape) + ": its last dim exceeds the " +
                                           std::to_string(g.total()) + " keys (past and new)");
  }
}

std::vector<TensorInfo> infer_attention(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& q = require_input(node, inputs, kQ, "Q");
  require_float(node, q, "input Q");
  if (q.shape.size() != 3 && q.shape.size() != 4) {
    node_fail<InvalidModelError>(node, "Q " + shape_str(q.shape) + " must be 3-D or 4-D");
  }
  const TensorInfo& k = require_input(node, inputs, kK, "K");
  const TensorInfo& v = require_input(node, inputs, kV, "V");
  require_rank(node, k, q.shape.size(), "K");
  require_rank(node, v, q.shape.size(), "V");
  if (k.dtype != q.dtype || v.dtype != q.dtype) node_fail<InvalidModelError>(node, "K and V must have Q's dtype");
  const AttentionGeometry g = attention_geometry(node, inputs);
  if (input_present(inputs, kNonpad)) {
    const TensorInfo& n = require_input(node, inputs, kNonpad, "nonpad_kv_seqlen");
    if (n.dtype != DType::Int64 || n.shape != Shape{g.batch}) {
      node_fail<InvalidModelError>(node, "nonpad_kv_seqlen " + shape_str(n.shape) + " (" + dtype_name(n.dtype) +
                                             ") must be int64 [" + std::to_string(g.batch) + "]");
    }
  }
  const Shape y = g.packed ? Shape{g.batch, g.q_seq, g.q_heads * g.v_head} : Shape{g.batch, g.q_heads, g.q_seq, g.v_head};
  return {TensorInfo{y, q.dtype}, TensorInfo{{g.batch, g.kv_heads, g.total(), g.head}, q.dtype},
          TensorInfo{{g.batch, g.kv_heads, g.total(), g.v_head}, q.dtype},
          TensorInfo{{g.batch, g.q_heads, g.q_seq, g.total()}, q.dtype}};
}

}  // namespace

AttentionGeometry attention_geometry(const Node& node, const std::vector<ValueInfo>& inputs) {
  AttentionGeometry g;
  const TensorInfo& q = inputs[kQ].info;
  g.packed = q.shape.size() == 3;
  read_qkv(node, q.shape, inputs[kK].info.shape, inputs[kV].info.shape, g);
  if (input_present(inputs, kPastKey) || input_present(inputs, kPastValue)) read_past(node, inputs, q.dtype, g);
  g.has_nonpad = input_present(inputs, kNonpad);
  if (input_present(inputs, kMask)) read_mask(node, inputs, q.dtype, g);
  g.scale = node.has_attr("scale") ? node.attr_float("scale", 1.0f)
                                   : static_cast<float>(1.0 / std::sqrt(static_cast<double>(g.head)));
  g.softcap = node.attr_float("softcap", 0.0f);
  g.causal = node.attr_int("is_causal", 0) != 0;
  g.left_window = node.attr_int("left_window_size", -1);
  g.right_window = node.attr_int("right_window_size", -1);
  g.qk_mode = static_cast<QkOutput>(node.attr_int("qk_matmul_output_mode", 0));
  return g;
}

void register_attention_ops(OpRegistry& r) {
  OpDef def;
  def.min_opset = kAttentionOpset;
  def.validate = validate_attention;
  def.infer = infer_attention;
  r.add("Attention", std::move(def));
}

}  // namespace dnnx
