// RotaryEmbedding's meaning (ops/attention/rotary_embedding.h).
#include "ops/attention/rotary_embedding.h"

#include "ops/const_inputs.h"

namespace dnnx {

namespace {

constexpr int kRotaryOpset = 23;

std::vector<TensorInfo> infer_rotary(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  require_float(node, x, "input");
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (require_input(node, inputs, i, i == 1 ? "cos_cache" : "sin_cache").dtype != x.dtype) {
      node_fail<InvalidModelError>(node, std::string(i == 1 ? "cos_cache" : "sin_cache") + " must have input's dtype");
    }
  }
  rotary_geometry(node, inputs);
  return {x};
}

}  // namespace

RotaryGeometry rotary_geometry(const Node& node, const std::vector<ValueInfo>& inputs) {
  RotaryGeometry g;
  const Shape& x = inputs[0].info.shape;
  g.interleaved = node.attr_int("interleaved", 0) != 0;
  if (x.size() == 4) {
    g.batch = x[0];
    g.heads = x[1];
    g.seq = x[2];
    g.head = x[3];
  } else if (x.size() == 3) {
    g.packed = true;
    g.heads = node.attr_int("num_heads", 0);
    if (g.heads <= 0 || x[2] % g.heads != 0) {
      node_fail<InvalidModelError>(node, "3-D input " + shape_str(x) + " needs num_heads dividing its hidden size, got " +
                                             std::to_string(g.heads));
    }
    g.batch = x[0];
    g.seq = x[1];
    g.head = x[2] / g.heads;
  } else {
    node_fail<InvalidModelError>(node, "input " + shape_str(x) + " must be [B, H, S, D] or [B, S, H*D]");
  }
  g.rotary = node.attr_int("rotary_embedding_dim", 0);
  if (g.rotary == 0) g.rotary = g.head;
  if (g.rotary < 0 || g.rotary > g.head || g.rotary % 2 != 0) {
    node_fail<InvalidModelError>(node, "rotary_embedding_dim " + std::to_string(g.rotary) +
                                           " must be even and at most the head size " + std::to_string(g.head));
  }
  const Shape& cos = inputs[1].info.shape;
  const Shape& sin = inputs[2].info.shape;
  g.has_positions = input_present(inputs, 3);
  Shape want;
  if (g.has_positions) {
    const TensorInfo& p = inputs[3].info;
    if (p.dtype != DType::Int64 || p.shape != Shape{g.batch, g.seq}) {
      node_fail<InvalidModelError>(node, "position_ids " + shape_str(p.shape) + " (" + dtype_name(p.dtype) +
                                             ") must be int64 [" + std::to_string(g.batch) + ", " +
                                             std::to_string(g.seq) + "]");
    }
    g.max_position = cos.empty() ? 0 : cos[0];
    want = {g.max_position, g.rotary / 2};
  } else {
    want = {g.batch, g.seq, g.rotary / 2};
  }
  if (cos != want || sin != want) {
    node_fail<InvalidModelError>(node, "cos_cache " + shape_str(cos) + " and sin_cache " + shape_str(sin) + " must be " +
                                           (g.has_positions ? "[max_position, rotary_dim/2] " : "[B, S, rotary_dim/2] ") +
                                           shape_str(want));
  }
  return g;
}

void register_rotary_embedding_ops(OpRegistry& r) {
  OpDef def;
  def.min_opset = kRotaryOpset;
  def.validate = [](const Node& node) { node.expect_only_attrs({"interleaved", "num_heads", "rotary_embedding_dim"}); };
  def.infer = infer_rotary;
  r.add("RotaryEmbedding", std::move(def));
}

}  // namespace dnnx
