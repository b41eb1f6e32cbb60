#include "ops/ml/ml_attrs.h"

namespace dnnx {

const ConstTensor* attr_tensor(const Node& node, const std::string& name) {
  auto it = node.attrs.find(name);
  if (it == node.attrs.end()) return nullptr;
  const ConstTensorPtr* t = std::get_if<ConstTensorPtr>(&it->second);
  if (!t || !*t) node_fail<InvalidModelError>(node, "attribute '" + name + "' must be a tensor");
  return t->get();
}

std::vector<double> tensor_doubles(const Node& node, const ConstTensor& t, const std::string& name) {
  const int64_t n = numel(t.info.shape);
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double v = 0;
    switch (t.info.dtype) {
      case DType::Float32: v = t.as<float>()[i]; break;
      case DType::Float64: v = t.as<double>()[i]; break;
      case DType::Float16: v = half_to_float(t.as<uint16_t>()[i]); break;
      case DType::BFloat16: v = bfloat16_to_float(t.as<uint16_t>()[i]); break;
      case DType::Int64: v = static_cast<double>(t.as<int64_t>()[i]); break;
      case DType::Int32: v = t.as<int32_t>()[i]; break;
      case DType::Int16: v = t.as<int16_t>()[i]; break;
      case DType::Int8: v = t.as<int8_t>()[i]; break;
      case DType::UInt8: v = t.as<uint8_t>()[i]; break;
      case DType::UInt16: v = t.as<uint16_t>()[i]; break;
      case DType::UInt32: v = t.as<uint32_t>()[i]; break;
      default:
        node_fail<InvalidModelError>(node, "attribute '" + name + "' must hold numbers, got " +
                                               dtype_name(t.info.dtype));
    }
    out[static_cast<size_t>(i)] = v;
  }
  return out;
}

std::vector<int64_t> tensor_ints(const Node& node, const ConstTensor& t, const std::string& name) {
  if (!is_integer(t.info.dtype)) {
    node_fail<InvalidModelError>(node, "attribute '" + name + "' must hold integers, got " + dtype_name(t.info.dtype));
  }
  return t.to_int64();
}

std::vector<std::string> tensor_strings(const Node& node, const ConstTensor& t, const std::string& name) {
  if (t.info.dtype != DType::String) {
    node_fail<InvalidModelError>(node, "attribute '" + name + "' must hold strings, got " + dtype_name(t.info.dtype));
  }
  const int64_t n = numel(t.info.shape);
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out.push_back(string_of(t.as<StringPtr>()[i]));
  return out;
}

}  // namespace dnnx
