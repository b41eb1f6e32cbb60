// NonZero and Compress: ops whose output shape is a count of input values (Note [staged plans] in
// runtime/stages.h). Their OpDefs compute the outputs on the host from whole input tensors
// (`evaluate`): the engine runs them between plan stages, and the planner folds them when every
// input is a constant of the plan. `infer` gives the exact shape then.
#include <algorithm>
#include <cstring>

#include "ops/indexing/evaluate.h"

namespace dnnx {

namespace {

// Whether one element is nonzero under its type's own zero (-0.0 is zero; NaN is not).
bool element_nonzero(const uint8_t* p, DType t) {
  switch (t) {
    case DType::Float32: { float v; std::memcpy(&v, p, 4); return v != 0.0f; }
    case DType::Float64: { double v; std::memcpy(&v, p, 8); return v != 0.0; }
    case DType::Float16:
    case DType::BFloat16: { uint16_t v; std::memcpy(&v, p, 2); return storage_to_float(v, t) != 0.0f; }
    default: break;
  }
  if (is_storage_only(t) && t != DType::Int4 && t != DType::UInt4) return minifloat_to_float(*p, t) != 0.0f;
  for (size_t b = 0; b < dtype_size(t); ++b) {
    if (p[b]) return true;
  }
  return false;
}

// NonZero (opset 9/13): X of rank r -> int64 [r, nnz], the indices of the nonzero elements in
// row-major order (a scalar counts as shape [1]: [1, nnz], as onnxruntime gives).
std::vector<ConstTensorPtr> nonzero(const Node& node, const std::vector<ConstTensorPtr>& in) {
  const ConstTensor& x = *in.at(0);
  const int64_t n = numel(x.info.shape);
  const size_t elem = dtype_size(x.info.dtype);
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < n; ++i) {
    if (element_nonzero(x.data.data() + i * elem, x.info.dtype)) hits.push_back(i);
  }
  const Shape shape = x.info.shape.empty() ? Shape{1} : x.info.shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t nnz = static_cast<int64_t>(hits.size());
  auto out = std::make_shared<ConstTensor>();
  out->info = TensorInfo{{rank, nnz}, DType::Int64};
  out->data.resize(out->info.bytes());
  int64_t* o = out->as_mut<int64_t>();
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t flat = hits[k];
    for (int64_t d = rank - 1; d >= 0; --d) {  // unravel: the last dim varies fastest
      const int64_t dim = shape[d];
      o[d * nnz + k] = flat % dim;
      flat /= dim;
    }
  }
  (void)node;
  return {out};
}

// Compress (opset 9/11): the slices of `input` along `axis` (or of its flattened elements, no
// axis) whose entry in the 1-D bool `condition` is true; condition may be shorter than the dim
// (the rest is dropped) or longer (its extra entries ignored, as onnxruntime does).
std::vector<ConstTensorPtr> compress(const Node& node, const std::vector<ConstTensorPtr>& in) {
  const ConstTensor& x = *in.at(0);
  const ConstTensor& cond = *in.at(1);
  if (cond.info.dtype != DType::Bool) node_fail<InvalidModelError>(node, "condition must be bool, got " + cond.info.str());
  if (cond.info.shape.size() != 1) {
    node_fail<InvalidModelError>(node, "condition must be 1-D, got " + shape_str(cond.info.shape));
  }
  const bool has_axis = node.has_attr("axis");
  const int64_t rank = static_cast<int64_t>(x.info.shape.size());
  const int64_t axis = has_axis ? normalize_axis(node, node.attr_int("axis", 0), rank) : 0;
  // View the input as [outer, dim, inner] along the axis (flattened: [1, numel, 1]).
  int64_t outer = 1, dim = numel(x.info.shape), inner = 1;
  if (has_axis) {
    dim = x.info.shape[axis];
    for (int64_t d = 0; d < axis; ++d) outer *= x.info.shape[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.info.shape[d];
  }
  // onnxruntime reads min(len, dim) entries: a longer condition's extra entries select nothing.
  const int64_t len = std::min(cond.info.shape[0], dim);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < len; ++i) {
    if (element_nonzero(cond.data.data() + i * dtype_size(cond.info.dtype), cond.info.dtype)) kept.push_back(i);
  }
  auto out = std::make_shared<ConstTensor>();
  out->info.dtype = x.info.dtype;
  out->info.shape = has_axis ? x.info.shape : Shape{};
  if (has_axis) out->info.shape[axis] = static_cast<int64_t>(kept.size());
  else out->info.shape = {static_cast<int64_t>(kept.size())};
  out->data.resize(out->info.bytes());
  out->strings = x.strings;  // Note [string tensors]: kept elements point into x's store
  const size_t block = static_cast<size_t>(inner) * dtype_size(x.info.dtype);
  uint8_t* o = out->data.data();
  for (int64_t a = 0; a < outer; ++a) {
    for (int64_t k : kept) {
      std::memcpy(o, x.data.data() + (static_cast<size_t>(a * dim + k)) * block, block);
      o += block;
    }
  }
  return {out};
}

}  // namespace

// Output types when every input is constant (the planner folds then); the engine runs it otherwise.
std::vector<TensorInfo> infer_by_evaluating(const Node& node, const std::vector<ValueInfo>& in, const HostEvaluate& eval) {
  std::vector<ConstTensorPtr> values;
  for (const ValueInfo& v : in) {
    if (!v.present) {
      values.push_back(nullptr);
      continue;
    }
    if (!v.constant) node_fail<InvalidModelError>(node, "its output shape depends on its input values (Note [staged plans])");
    values.push_back(std::make_shared<ConstTensor>(*v.constant));
  }
  std::vector<TensorInfo> out;
  for (const ConstTensorPtr& t : eval(node, values)) out.push_back(t->info);
  return out;
}


void register_value_shaped_ops(OpRegistry& r) {
  OpDef nz;
  nz.min_opset = 9;
  nz.value_shaped = true;
  nz.validate = [](const Node& node) { node.expect_only_attrs({}); };
  nz.evaluate = nonzero;
  nz.infer = [](const Node& node, const std::vector<ValueInfo>& in) {
    require_input(node, in, 0, "X");
    return infer_by_evaluating(node, in, nonzero);
  };
  r.add("NonZero", nz);

  OpDef cp;
  cp.min_opset = 9;
  cp.value_shaped = true;
  cp.validate = [](const Node& node) { node.expect_only_attrs({"axis"}); };
  cp.evaluate = compress;
  cp.infer = [](const Node& node, const std::vector<ValueInfo>& in) {
    require_input(node, in, 0, "input");
    require_input(node, in, 1, "condition");
    return infer_by_evaluating(node, in, compress);
  };
  r.add("Compress", cp);
}

}  // namespace dnnx
