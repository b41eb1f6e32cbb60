// "<op>@NHWC": the definitions wrap the base op's. Validation is the base op's (plus rank 4 for
// the permuted inputs); shape inference permutes the channels-last inputs back, asks the base op
// and permutes output 0 forward again (Note in ops/layout/channels_last.h).
#include "ops/layout/channels_last.h"

#include <map>

#include "ops/layout/cast.h"
#include "ops/op.h"

namespace dnnx {

namespace {

const std::map<std::string, std::vector<size_t>>& channels_last_table() {
  static const std::map<std::string, std::vector<size_t>> table = {
      {"Conv", {0, 1}},         {"Conv+Relu", {0, 1}},          {"Conv+Add+Relu", {0, 1, 3}},
      {"Conv+MaxPool", {0, 1}}, {"Conv+Relu+MaxPool", {0, 1}}, {"MaxPool", {0}},
      {"GlobalAveragePool", {0}},
      // the CPU's (Note [channels-last conv on the cpu] in backends/cpu/conv/conv_nhwc_cpu.cc)
      {"Conv+Clip", {0, 1}},    {"Conv+HardSwish", {0, 1}},    {"Conv+Swish", {0, 1}},   {"AveragePool", {0}},
      {"BatchNormalization", {0}}, {"BatchNormalization+Relu", {0}},
      // x, w and the residual z (Note [int8 nhwc conv] in backends/cpu/quant/int8_conv_nhwc_cpu.h)
      {"Int8Conv", {0, 3, 12}},
  };
  return table;
}

Node base_node(const Node& node) {
  Node base = node;
  base.op_type = channels_first_op(node.op_type);
  return base;
}

}  // namespace

const std::vector<size_t>* channels_last_inputs(const std::string& base_op) {
  auto it = channels_last_table().find(base_op);
  return it == channels_last_table().end() ? nullptr : &it->second;
}

bool is_channels_last_op(const std::string& op_type) {
  const std::string suffix = kChannelsLastSuffix;
  return op_type.size() > suffix.size() && op_type.compare(op_type.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string channels_first_op(const std::string& op_type) {
  if (!is_channels_last_op(op_type)) return op_type;
  return op_type.substr(0, op_type.size() - std::string(kChannelsLastSuffix).size());
}

Shape to_channels_last(const Shape& s) { return {s[0], s[2], s[3], s[1]}; }
Shape to_channels_first(const Shape& s) { return {s[0], s[3], s[1], s[2]}; }

namespace {

// Transpose+Pad's one form: perm [0, 2, 3, 1] and pads only at the last axis's end, >= 0.
void validate_transpose_pad(const Node& node) {
  node.expect_only_attrs({"perm", "pads"});
  const std::vector<int64_t> pads = node.attr_ints("pads", {});
  bool ok = node.attr_ints("perm", {}) == channels_last_perm() && pads.size() == 8 && pads[7] >= 0;
  for (size_t i = 0; ok && i < 7; ++i) ok = pads[i] == 0;
  if (!ok) node_fail<InvalidModelError>(node, "expects perm [0,2,3,1] and pads at the last axis's end only");
}

std::vector<TensorInfo> infer_transpose_pad(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "data");
  if (x.shape.size() != 4) node_fail<InvalidModelError>(node, "input must be 4-D, got " + x.str());
  TensorInfo y{to_channels_last(x.shape), x.dtype};
  y.shape[3] += node.attr_ints("pads", {}).back();
  return {y};
}

void validate_space_to_depth(const Node& node) {
  node.expect_only_attrs({"pads", "channels", "to"});
  const std::vector<int64_t> pads = node.attr_ints("pads", {});
  bool ok = pads.size() == 4 && node.attr_int("channels", 0) > 0;
  for (size_t i = 0; ok && i < 4; ++i) ok = pads[i] >= 0;
  if (!ok) node_fail<InvalidModelError>(node, "expects 4 pads >= 0 and channels > 0");
}

std::vector<TensorInfo> infer_space_to_depth(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "data");
  if (x.shape.size() != 4) node_fail<InvalidModelError>(node, "input must be 4-D, got " + x.str());
  const int64_t channels = node.attr_int("channels", 0);
  if (channels < 4 * x.shape[1]) {
    node_fail<InvalidModelError>(node, "channels " + std::to_string(channels) + " cannot hold the 2x2 blocks of " +
                                           x.str());
  }
  DType out = x.dtype;
  if (node.has_attr("to")) {  // Note [entry cast]: float32 in, half out
    out = cast_target(node);
    if (x.dtype != DType::Float32 || !is_half(out)) {
      node_fail<InvalidModelError>(node, "converts only float32 to float16 or bfloat16, got " + x.str() + " to " +
                                             dtype_name(out));
    }
  }
  return {TensorInfo{space_to_depth_shape(x.shape, node.attr_ints("pads", {}), channels), out}};
}

}  // namespace

Shape space_to_depth_shape(const Shape& x, const std::vector<int64_t>& pads, int64_t channels) {
  const int64_t hp = x[2] + pads[0] + pads[2], wp = x[3] + pads[1] + pads[3];
  return {x[0], (hp + 1) / 2, (wp + 1) / 2, channels};
}

void register_channels_last_ops(OpRegistry& r) {
  OpDef space_to_depth;
  space_to_depth.fused = true;
  space_to_depth.validate = validate_space_to_depth;
  space_to_depth.infer = infer_space_to_depth;
  r.add(kSpaceToDepthOp, std::move(space_to_depth));
  OpDef transpose_pad;
  transpose_pad.fused = true;
  transpose_pad.validate = validate_transpose_pad;
  transpose_pad.infer = infer_transpose_pad;
  r.add(kTransposePadOp, std::move(transpose_pad));
  for (const auto& kv : channels_last_table()) {
    const OpDef* base = r.find(kv.first);
    const std::vector<size_t> permuted = kv.second;
    OpDef def;
    def.fused = true;
    def.validate = [base](const Node& node) { base->validate(base_node(node)); };
    def.infer = [base, permuted](const Node& node, const std::vector<ValueInfo>& inputs) {
      std::vector<ValueInfo> nchw = inputs;
      for (size_t i : permuted) {
        if (i >= nchw.size() || !nchw[i].present) continue;
        if (nchw[i].info.shape.size() != 4) {
          node_fail<InvalidModelError>(node, "input " + std::to_string(i) + " must be 4-D (channels last), got " +
                                                 nchw[i].info.str());
        }
        nchw[i].info.shape = to_channels_first(nchw[i].info.shape);
        nchw[i].constant = nullptr;  // its bytes are in the other order
      }
      std::vector<TensorInfo> out = base->infer(base_node(node), nchw);
      out[0].shape = to_channels_last(out[0].shape);
      return out;
    };
    r.add(kv.first + kChannelsLastSuffix, std::move(def));
  }
}

}  // namespace dnnx
