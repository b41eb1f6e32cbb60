// ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceL2, ReduceLogSum,
// ReduceLogSumExp: X [d...] float32 (ReduceL1, ReduceSumSquare: also the integer types;
// ReduceMax, ReduceMin: the integer types, and bool from opset 20) -> the
// reduction over the reduced axes (ops/reduce/reduce.h), keeping them as 1s (keepdims, the default) or
// dropping them. The axes are an attribute before opset 18 (ReduceSum: 13) and an optional
// input after, a value input: known when the plan is built.
#include "ops/reduce/reduce.h"

#include "ops/const_inputs.h"
#include "ops/elementwise/elementwise.h"
#include "ops/op.h"

namespace dnnx {

namespace {

constexpr int kAxesAsInputOpset = 18;
constexpr int kSumAxesAsInputOpset = 13;  // ReduceSum took its axes as an input first
constexpr size_t kAxesInput = 1;
constexpr int kBoolMaxMinOpset = 20;  // ReduceMax and ReduceMin take bool

int axes_input_opset(const Node& node) {
  return node.op_type == "ReduceSum" ? kSumAxesAsInputOpset : kAxesAsInputOpset;
}

void validate_reduce(const Node& node) {
  if (node.opset < axes_input_opset(node)) {
    node.expect_only_attrs({"axes", "keepdims"});
  } else {
    node.expect_only_attrs({"keepdims", "noop_with_empty_axes"});
  }
}

std::vector<TensorInfo> infer_reduce(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "data");
  const ReduceKind kind = reduce_kind(node.op_type);
  if (kind == ReduceKind::L1 || kind == ReduceKind::SumSquare || kind == ReduceKind::Sum || kind == ReduceKind::Prod) {
    require_element_type(node, x, ElementTypes::Numbers, "input data");
  } else if (kind == ReduceKind::Max || kind == ReduceKind::Min) {
    // onnx's T: the number types, and bool from opset 20 (Max: any, Min: all)
    require_element_type(node, x, node.opset >= kBoolMaxMinOpset ? ElementTypes::NumbersAndBool : ElementTypes::Numbers,
                         "input data");
  } else {
    require_float(node, x, "input data");
  }
  return {TensorInfo{reduce_axes(node, inputs, x.shape).out, x.dtype}};
}

}  // namespace

ReduceKind reduce_kind(const std::string& op_type) {
  if (op_type == "ReduceSum") return ReduceKind::Sum;
  if (op_type == "ReduceMax") return ReduceKind::Max;
  if (op_type == "ReduceMin") return ReduceKind::Min;
  if (op_type == "ReduceProd") return ReduceKind::Prod;
  if (op_type == "ReduceL2") return ReduceKind::L2;
  if (op_type == "ReduceL1") return ReduceKind::L1;
  if (op_type == "ReduceSumSquare") return ReduceKind::SumSquare;
  if (op_type == "ReduceLogSum") return ReduceKind::LogSum;
  if (op_type == "ReduceLogSumExp") return ReduceKind::LogSumExp;
  return ReduceKind::Mean;
}

ReduceAxes reduce_axes(const Node& node, const std::vector<ValueInfo>& inputs, const Shape& x) {
  const int64_t rank = static_cast<int64_t>(x.size());
  const bool axes_as_input = node.opset >= axes_input_opset(node);
  const std::vector<int64_t> axes =
      !axes_as_input
          ? node.attr_ints("axes", {})
          : optional_constant_ints(node, inputs, kAxesInput, "axes").value_or(std::vector<int64_t>{});
  ReduceAxes r;
  r.keepdims = node.attr_int("keepdims", 1) != 0;
  const bool noop = axes_as_input && node.attr_int("noop_with_empty_axes", 0) != 0;
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
  for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2"}) r.add(op, def);
  // issue #35
  for (const char* op : {"ReduceL1", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"}) r.add(op, def);
}

}  // namespace dnnx
