#include "runtime/control/slices.h"

#include <cstring>
#include <stdexcept>

namespace dnnx {

void around(const Shape& s, int64_t axis, int64_t& outer, int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= s[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < s.size(); ++d) inner *= s[d];
}

ConstTensorPtr slice_along(const ConstTensor& t, int64_t axis, int64_t index) {
  int64_t outer = 0, inner = 0;
  around(t.info.shape, axis, outer, inner);
  const int64_t dim = t.info.shape[axis];
  auto out = std::make_shared<ConstTensor>();
  out->info.dtype = t.info.dtype;
  out->info.shape = t.info.shape;
  out->info.shape.erase(out->info.shape.begin() + axis);
  out->data.resize(out->info.bytes());
  out->strings = t.strings;  // Note [string tensors]: the same elements, the same store
  const size_t block = static_cast<size_t>(inner) * dtype_size(t.info.dtype);
  for (int64_t a = 0; a < outer && block; ++a) {
    std::memcpy(out->data.data() + a * block, t.data.data() + (a * dim + index) * block, block);
  }
  return out;
}

ConstTensorPtr stack_along(const std::vector<ConstTensorPtr>& parts, int64_t axis, const Shape& empty_shape, DType dtype) {
  auto out = std::make_shared<ConstTensor>();
  if (parts.empty()) {
    out->info = TensorInfo{empty_shape, dtype};
    out->data.resize(out->info.bytes());
    return out;
  }
  const TensorInfo& part = parts[0]->info;
  out->info.dtype = part.dtype;
  out->info.shape = part.shape;
  out->info.shape.insert(out->info.shape.begin() + axis, static_cast<int64_t>(parts.size()));
  out->data.resize(out->info.bytes());
  if (part.dtype == DType::String) {  // Note [string tensors]: elements of every part's store
    out->strings = std::make_shared<StringStore>();
    for (const ConstTensorPtr& p : parts) {
      if (p->strings) out->strings->keep(p->strings);
    }
  }
  int64_t outer = 0, inner = 0;
  around(out->info.shape, axis, outer, inner);
  const size_t block = static_cast<size_t>(inner) * dtype_size(part.dtype);
  const int64_t n = static_cast<int64_t>(parts.size());
  for (int64_t k = 0; k < n && block; ++k) {
    for (int64_t a = 0; a < outer; ++a) {
      std::memcpy(out->data.data() + (a * n + k) * block, parts[k]->data.data() + a * block, block);
    }
  }
  return out;
}

bool truth_of(const ConstTensor& t) {
  if (numel(t.info.shape) < 1) return false;
  const size_t size = dtype_size(t.info.dtype);
  if (t.info.dtype == DType::Float32) {
    float v;
    std::memcpy(&v, t.data.data(), 4);
    return v != 0.0f;
  }
  if (t.info.dtype == DType::Float64) {
    double v;
    std::memcpy(&v, t.data.data(), 8);
    return v != 0.0;
  }
  for (size_t b = 0; b < size; ++b) {
    if (t.data[b]) return true;
  }
  return false;
}

int64_t int_of(const ConstTensor& t) { return t.to_int64().at(0); }

ConstTensorPtr scalar_int64(int64_t v) {
  auto t = std::make_shared<ConstTensor>();
  t->info = TensorInfo{{}, DType::Int64};
  t->data.resize(8);
  std::memcpy(t->data.data(), &v, 8);
  return t;
}

ConstTensorPtr scalar_bool(bool v) {
  auto t = std::make_shared<ConstTensor>();
  t->info = TensorInfo{{}, DType::Bool};
  t->data.assign(1, v ? 1 : 0);
  return t;
}

}  // namespace dnnx
