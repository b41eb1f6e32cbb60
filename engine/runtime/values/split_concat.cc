// SplitToSequence and ConcatFromSequence (opset 11), as onnxruntime runs them, for every dtype
// (bytes moved; string elements keep their stores: Note [string tensors]).
#include <cstring>

#include "ops/op.h"
#include "runtime/control/slices.h"
#include "runtime/values/value_ops.h"

namespace dnnx {

namespace {

// The piece [begin, begin + len) of `x` along `axis`; without the axis where `squeeze` (len 1).
ConstTensorPtr piece(const ConstTensor& x, int64_t axis, int64_t begin, int64_t len, bool squeeze) {
  int64_t outer = 0, inner = 0;
  around(x.info.shape, axis, outer, inner);
  const int64_t dim = x.info.shape[axis];
  auto out = std::make_shared<ConstTensor>();
  out->info = TensorInfo{x.info.shape, x.info.dtype};
  out->info.shape[axis] = len;
  if (squeeze) out->info.shape.erase(out->info.shape.begin() + axis);
  out->data.resize(out->info.bytes());
  out->strings = x.strings;
  const size_t elem = dtype_size(x.info.dtype);
  const size_t block = static_cast<size_t>(len * inner) * elem;
  for (int64_t a = 0; a < outer && block; ++a) {
    std::memcpy(out->data.data() + a * block, x.data.data() + static_cast<size_t>((a * dim + begin) * inner) * elem, block);
  }
  return out;
}

}  // namespace

// SplitToSequence(input, split?): without split, pieces of 1 along `axis` (squeezed unless
// keepdims); a scalar split s, pieces of s (the last one smaller where s does not divide the
// dim); a 1-D split, pieces of those sizes, which must sum to the dim (keepdims is then ignored).
std::vector<HostValue> run_split_to_sequence(const Node& node, const std::vector<HostValue>& inputs) {
  const ConstTensor& x = *tensor_of(node, inputs.at(0), "input");
  const int64_t rank = static_cast<int64_t>(x.info.shape.size());
  if (rank == 0) node_fail<InvalidModelError>(node, "input must have a rank of at least 1, got a scalar");
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), rank);
  const int64_t dim = x.info.shape[axis];
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (inputs.size() < 2 || !inputs[1].present()) {
    sizes.assign(static_cast<size_t>(dim), 1);
    squeeze = node.attr_int("keepdims", 1) == 0;
  } else {
    const ConstTensor& split = *tensor_of(node, inputs[1], "split");
    if (!is_index(split.info.dtype) || split.info.shape.size() > 1) {
      node_fail<InvalidModelError>(node, "split must be an int32 or int64 scalar or 1-D tensor, got " + split.info.str());
    }
    const std::vector<int64_t> values = split.to_int64();
    if (split.info.shape.empty()) {
      const int64_t s = values.at(0);
      if (s <= 0) node_fail<InvalidModelError>(node, "a scalar split must be positive, got " + std::to_string(s));
      for (int64_t at = 0; at < dim; at += s) sizes.push_back(std::min(s, dim - at));
    } else {
      int64_t sum = 0;
      for (int64_t s : values) {
        if (s < 0) node_fail<InvalidModelError>(node, "split sizes must be >= 0, got " + std::to_string(s));
        sum += s;
      }
      if (sum != dim) {
        node_fail<InvalidModelError>(node, "split sizes sum to " + std::to_string(sum) + ", but the input " +
                                               x.info.str() + " has " + std::to_string(dim) + " along axis " +
                                               std::to_string(axis));
      }
      sizes = values;
    }
  }
  std::vector<HostValue> items;
  int64_t begin = 0;
  for (int64_t len : sizes) {
    items.emplace_back(piece(x, axis, begin, len, squeeze));
    begin += len;
  }
  return {HostValue::sequence(x.info.dtype, std::move(items))};
}

// ConcatFromSequence(input_sequence): its tensors joined along `axis` (every other dim equal),
// or with new_axis=1 stacked along a new axis (every shape equal; axis in [-r-1, r]).
std::vector<HostValue> run_concat_from_sequence(const Node& node, const std::vector<HostValue>& inputs) {
  const HostValue& seq = sequence_input(node, inputs, 0);
  if (!node.has_attr("axis")) node_fail<InvalidModelError>(node, "needs the attribute 'axis'");
  const bool new_axis = node.attr_int("new_axis", 0) != 0;
  if (seq.items.empty()) node_fail<InvalidModelError>(node, "cannot concatenate an empty sequence");
  const TensorInfo& first = seq.items[0].tensor->info;
  const int64_t rank = static_cast<int64_t>(first.shape.size());
  if (rank == 0 && !new_axis) node_fail<InvalidModelError>(node, "cannot concatenate scalars (use new_axis=1)");
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), new_axis ? rank + 1 : rank);
  // Each element seen as rank-r' (r' = r + new_axis) with its extent along `axis`.
  Shape out_shape = first.shape;
  if (new_axis) out_shape.insert(out_shape.begin() + axis, 0);
  out_shape[axis] = 0;
  std::vector<int64_t> extents;
  for (size_t k = 0; k < seq.items.size(); ++k) {
    const TensorInfo& t = seq.items[k].tensor->info;
    Shape s = t.shape;
    if (new_axis) s.insert(s.begin() + std::min<int64_t>(axis, static_cast<int64_t>(s.size())), 1);
    bool same = t.dtype == first.dtype && s.size() == out_shape.size();
    for (size_t d = 0; same && d < s.size(); ++d) same = static_cast<int64_t>(d) == axis || s[d] == out_shape[d];
    if (!same) {
      node_fail<InvalidModelError>(node, "tensor " + std::to_string(k) + " " + t.str() + " does not match tensor 0 " +
                                             first.str() + (new_axis ? " (stacked: every shape must be equal)"
                                                                     : " outside axis " + std::to_string(axis)));
    }
    extents.push_back(s[axis]);
    out_shape[axis] += s[axis];
  }
  auto out = std::make_shared<ConstTensor>();
  out->info = TensorInfo{out_shape, first.dtype};
  out->data.resize(out->info.bytes());
  if (first.dtype == DType::String) {  // Note [string tensors]: elements of every part's store
    out->strings = std::make_shared<StringStore>();
    for (const HostValue& v : seq.items) {
      if (v.tensor->strings) out->strings->keep(v.tensor->strings);
    }
  }
  int64_t outer = 0, inner = 0;
  around(out_shape, axis, outer, inner);
  const size_t elem = dtype_size(first.dtype);
  size_t offset = 0;
  const size_t row = static_cast<size_t>(out_shape[axis] * inner) * elem;  // one outer index of the output
  for (size_t k = 0; k < seq.items.size(); ++k) {
    const size_t block = static_cast<size_t>(extents[k] * inner) * elem;
    for (int64_t a = 0; a < outer && block; ++a) {
      std::memcpy(out->data.data() + a * row + offset, seq.items[k].tensor->data.data() + a * block, block);
    }
    offset += block;
  }
  return {HostValue(out)};
}

}  // namespace dnnx
