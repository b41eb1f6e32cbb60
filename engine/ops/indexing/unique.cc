// Unique on the host (Note [value-shaped compute] in value_shaped_ops.h), as onnxruntime's CPU
// kernel computes it: the values (or the slices along axis, compared lexicographically in the
// order rows before the axis, then columns after it) go into a std::map in input order, each new
// one numbered by first occurrence. sorted=1 emits them in the map's ascending order, sorted=0 in
// first-occurrence order; inverse_indices maps each input value (slice) to its output position.
// Equality is the map's: NaN, which `<` does not rank, lands wherever onnxruntime's map puts it.
#include <cstring>
#include <functional>
#include <map>

#include "ops/indexing/value_shaped_ops.h"
#include "ops/indexing/value_shaped.h"
#include "ops/op.h"

namespace dnnx {

namespace {

// The numbering of the distinct keys of a sequence, in input order: first[u] and count[u] of the
// u-th new key, inverse[i] the number of item i's key; order lists the numbers in output order.
struct Numbering {
  std::vector<int64_t> first, count, inverse, order;
};

template <class Key>
Numbering number_keys(int64_t items, const std::function<Key(int64_t)>& key_of, bool sorted) {
  Numbering n;
  std::map<Key, int64_t> seen;
  n.inverse.reserve(static_cast<size_t>(items));
  for (int64_t i = 0; i < items; ++i) {
    Key key = key_of(i);
    auto it = seen.find(key);
    if (it == seen.end()) {
      const int64_t u = static_cast<int64_t>(n.first.size());
      seen.emplace(std::move(key), u);
      n.first.push_back(i);
      n.count.push_back(1);
      n.inverse.push_back(u);
    } else {
      ++n.count[static_cast<size_t>(it->second)];
      n.inverse.push_back(it->second);
    }
  }
  if (sorted) {
    for (const auto& kv : seen) n.order.push_back(kv.second);
  } else {
    for (int64_t u = 0; u < static_cast<int64_t>(n.first.size()); ++u) n.order.push_back(u);
  }
  return n;
}

// The element type's value as the map compares it: the halves as float32, bool as a byte.
template <class Fn>
void with_key_reader(const Node& node, DType t, const uint8_t* data, Fn&& fn) {
  auto typed = [&](auto tag) {
    using T = decltype(tag);
    fn([data](int64_t i) {
      T v;
      std::memcpy(&v, data + i * sizeof(T), sizeof(T));
      return v;
    });
  };
  auto half = [&](DType half_type) {
    fn([data, half_type](int64_t i) {
      uint16_t bits;
      std::memcpy(&bits, data + i * 2, 2);
      return storage_to_float(bits, half_type);
    });
  };
  switch (t) {
    case DType::Float32: return typed(float{});
    case DType::Float64: return typed(double{});
    case DType::Float16: return half(DType::Float16);
    case DType::BFloat16: return half(DType::BFloat16);
    case DType::Int8: return typed(int8_t{});
    case DType::UInt8: return typed(uint8_t{});
    case DType::Bool: return typed(uint8_t{});
    case DType::Int16: return typed(int16_t{});
    case DType::UInt16: return typed(uint16_t{});
    case DType::Int32: return typed(int32_t{});
    case DType::UInt32: return typed(uint32_t{});
    case DType::Int64: return typed(int64_t{});
    case DType::UInt64: return typed(uint64_t{});
    default:
      node_fail<UnsupportedModelError>(node, std::string("X of type ") + dtype_name(t) +
                                                 " is not supported (Unique takes the numeric types and bool)");
  }
}

ConstTensor int64_tensor(std::vector<int64_t> values) {
  ConstTensor t;
  t.info = TensorInfo{{static_cast<int64_t>(values.size())}, DType::Int64};
  t.data.resize(values.size() * sizeof(int64_t));
  if (!values.empty()) std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

}  // namespace

std::vector<ConstTensor> unique(const Node& node, const ValueShapedInputs& inputs) {
  const UniqueAttrs attrs = unique_attrs(node);
  const ConstTensor* x = inputs.empty() ? nullptr : inputs[0];
  if (!x) node_fail<InvalidModelError>(node, "X is a required input");
  const Shape& shape = x->info.shape;
  const size_t element = dtype_size(x->info.dtype);
  const uint8_t* data = x->data.data();

  // The input as [rows, n, columns] with n the items compared: the flattened input is [1, count, 1].
  int64_t rows = 1, n = numel(shape), columns = 1;
  size_t axis = 0;
  if (attrs.axis) {
    axis = static_cast<size_t>(normalize_axis(node, *attrs.axis, static_cast<int64_t>(shape.size())));
    n = shape[axis];
    for (size_t d = 0; d < axis; ++d) rows *= shape[d];
    for (size_t d = axis + 1; d < shape.size(); ++d) columns *= shape[d];
  }
  Numbering numbering;
  with_key_reader(node, x->info.dtype, data, [&](auto read) {
    using Value = decltype(read(0));
    if (!attrs.axis) {
      numbering = number_keys<Value>(n, read, attrs.sorted);
      return;
    }
    numbering = number_keys<std::vector<Value>>(n, [&](int64_t i) {
      std::vector<Value> slice;
      slice.reserve(static_cast<size_t>(rows * columns));
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < columns; ++c) slice.push_back(read((r * n + i) * columns + c));
      }
      return slice;
    }, attrs.sorted);
  });

  const int64_t found = static_cast<int64_t>(numbering.first.size());
  std::vector<int64_t> rank(static_cast<size_t>(found)), indices, counts, inverse;
  for (int64_t p = 0; p < found; ++p) rank[static_cast<size_t>(numbering.order[p])] = p;
  ConstTensor y;
  y.info.dtype = x->info.dtype;
  y.info.shape = attrs.axis ? shape : Shape{found};
  if (attrs.axis) y.info.shape[axis] = found;
  y.data.resize(static_cast<size_t>(rows * found * columns) * element);
  for (int64_t p = 0; p < found; ++p) {
    const int64_t u = numbering.order[static_cast<size_t>(p)];
    const int64_t src = numbering.first[static_cast<size_t>(u)];
    indices.push_back(src);
    counts.push_back(numbering.count[static_cast<size_t>(u)]);
    if (columns == 0) continue;
    for (int64_t r = 0; r < rows; ++r) {  // slice src of [rows, n, columns] -> slice p of [rows, found, columns]
      const size_t to = static_cast<size_t>((r * found + p) * columns) * element;
      const size_t from = static_cast<size_t>((r * n + src) * columns) * element;
      std::memcpy(y.data.data() + to, data + from, static_cast<size_t>(columns) * element);
    }
  }
  for (int64_t u : numbering.inverse) inverse.push_back(rank[static_cast<size_t>(u)]);
  std::vector<ConstTensor> outputs;
  outputs.push_back(std::move(y));
  outputs.push_back(int64_tensor(std::move(indices)));
  outputs.push_back(int64_tensor(std::move(inverse)));
  outputs.push_back(int64_tensor(std::move(counts)));
  return outputs;
}

}  // namespace dnnx
