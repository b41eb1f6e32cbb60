// ReduceMean: X [d...] float32 -> the mean over the reduced axes, keeping them as 1s
// (keepdims, the default) or dropping them. The axes must be known at load.
#include "ops/reduce.h"

#include "ops/const_inputs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

constexpr int kAxesAsInputOpset = 18;
constexpr size_t kAxesInput = 1;

void validate_reduce(const Node& node) {
  if (node.opset < kAxesAsInputOpset) {
    node.expect_only_attrs({"axes", "keepdims"});
  } else {
    node.expect_only_attrs({"keepdims", "noop_with_empty_axes"});
  }
}

std::vector<TensorInfo> infer_reduce(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "data");
  require_float(node, x, "input data");
  return {TensorInfo{reduce_axes(node, inputs, x.shape).out, x.dtype}};
}

}  // namespace

ReduceAxes reduce_axes(const Node& node, const std::vector<ValueInfo>& inputs, const Shape& x) {
  const int64_t rank = static_cast<int64_t>(x.size());
  const std::vector<int64_t> axes =
      node.opset < kAxesAsInputOpset
          ? node.attr_ints("axes", {})
          : optional_constant_ints(node, inputs, kAxesInput, "axes").value_or(std::vector<int64_t>{});
  ReduceAxes r;
  r.keepdims = node.attr_int("keepdims", 1) != 0;
  const bool noop = node.opset >= kAxesAsInputOpset && node.attr_int("noop_with_empty_axes", 0) != 0;
  r.reduced.assign(rank, axes.empty() && !noop);
  for (int64_t a : axes) r.reduced[normalize_axis(node, a, rank)] = true;
  for (int64_t d = 0; d < rank; ++d) {
    if (!r.reduced[d]) {
      r.out.push_back(x[d]);
    } else if (r.keepdims) {
      r.out.push_back(1);
    }
  }
  return r;
}

void register_reduce_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_reduce;
  def.infer = infer_reduce;
  def.value_inputs = {kAxesInput};
  def.min_opset = 1;
  r.add("ReduceMean", std::move(def));
}

}  // namespace dnnx
