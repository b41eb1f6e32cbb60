#include "ops/op.h"

namespace dnnx {

void OpRegistry::add(const std::string& op_type, OpDef def) {
  OpDef& slot = defs_[op_type];
  slot = std::move(def);
  index_[op_type] = &slot;  // a std::map's elements stay where they are
}

const OpDef* OpRegistry::find(const std::string& op_type) const {
  auto it = index_.find(op_type);
  return it == index_.end() ? nullptr : it->second;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& kv : defs_) {
    if (!kv.second.fused) out.push_back(kv.first);
  }
  return out;
}

std::string OpRegistry::names_joined() const {
  std::string out;
  for (const std::string& name : names()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

int64_t normalize_axis(const Node& node, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    node_fail<InvalidModelError>(node, "axis " + std::to_string(axis) + " is out of range for rank " +
                                           std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

const TensorInfo& require_input(const Node& node, const std::vector<ValueInfo>& inputs, size_t i,
                                const char* what) {
  if (i >= inputs.size() || !inputs[i].present) {
    node_fail<InvalidModelError>(node, std::string("missing required input ") + std::to_string(i) +
                                           " (" + what + ")");
  }
  return inputs[i].info;
}

void require_float(const Node& node, const TensorInfo& info, const char* what) {
  if (!is_floating(info.dtype)) {
    node_fail<UnsupportedModelError>(node, std::string(what) + " must be a float type (float32, float64, float16, bfloat16), got " +
                                               dtype_name(info.dtype));
  }
}

Shape attr_ints_of_size(const Node& node, const char* name, size_t count, int64_t fallback) {
  Shape v = node.attr_ints(name, Shape(count, fallback));
  if (v.size() != count) {
    node_fail<InvalidModelError>(node, std::string(name) + " has " + std::to_string(v.size()) + " values, expected " +
                                           std::to_string(count));
  }
  return v;
}

Shape broadcast_shapes(const Node& node, const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      node_fail<InvalidModelError>(node, "shapes " + shape_str(a) + " and " + shape_str(b) +
                                             " cannot be broadcast");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace dnnx
