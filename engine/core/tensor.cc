#include "core/tensor.h"

#include "core/errors.h"

namespace dnnx {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
  }
  return "?";
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

std::string TensorInfo::str() const { return shape_str(shape) + " " + dtype_name(dtype); }

std::vector<int64_t> ConstTensor::to_int64() const {
  const int64_t n = numel(info.shape);
  std::vector<int64_t> out(static_cast<size_t>(n));
  switch (info.dtype) {
    case DType::Int64: std::memcpy(out.data(), data.data(), n * 8); break;
    case DType::Int32:
      for (int64_t i = 0; i < n; ++i) out[i] = as<int32_t>()[i];
      break;
    case DType::Float32: throw InvalidModelError("expected an integer tensor, got float32");
  }
  return out;
}

}  // namespace dnnx
