// Element types, shapes and constant tensors: the engine's own, never the ONNX protobuf's.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace dnnx {

// Float16 (IEEE binary16) and BFloat16 (bfloat16: float32's sign and 8-bit exponent, 7 stored
// significand bits) exist only inside models loaded with precision="fp16" or "bf16": the
// half_storage pass (runtime/passes/half_storage.cc) makes such values; the importer never does.
// Bool is one byte per element holding 0 or 1 (numpy's bool_, ONNX's BOOL, DLPack's kBool).
// New types go at the end: DType crosses the device ABI (kDeviceAbiVersion).
enum class DType { Float32, Int32, Int64, Float16, Bool, BFloat16 };

// Whether `t` is one of the 2-byte float storage types of half storage (float16, bfloat16).
inline bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
// Whether `t` is a floating-point type (float32, float16 or bfloat16).
inline bool is_floating(DType t) { return t == DType::Float32 || is_half(t); }
// Whether `t` is int32 or int64.
inline bool is_integer(DType t) { return t == DType::Int32 || t == DType::Int64; }

// IEEE binary16 conversions on the host, round to nearest even (NaN stays NaN, overflow -> inf).
uint16_t float_to_half(float value);
float half_to_float(uint16_t bits);
// bfloat16 conversions on the host: the top 16 bits of the float32, rounded to nearest even
// (NaN stays a quiet NaN; bfloat16 has float32's range, so only values within half an ulp of
// FLT_MAX round to inf). to_float is exact.
uint16_t float_to_bfloat16(float value);
float bfloat16_to_float(uint16_t bits);
// The 2-byte pattern of `value` in the half type `half` (Float16 or BFloat16), and back.
uint16_t float_to_storage(float value, DType half);
float storage_to_float(uint16_t bits, DType half);

size_t dtype_size(DType t);
const char* dtype_name(DType t);

using Shape = std::vector<int64_t>;

// The element count. Overflow-safe (Note [absurd sizes] in runtime/size_check.h): a product past
// int64 saturates to INT64_MAX (never a wrapped value), so a shape of absurd dims reads as too
// large, never as small. A negative dim (a symbolic one, -1) gives a negative count.
int64_t numel(const Shape& s);
std::string shape_str(const Shape& s);  // "[2,3,4]"

struct TensorInfo {
  Shape shape;
  DType dtype = DType::Float32;
  // The bytes it takes; SIZE_MAX when that does not fit a size_t or a dim is negative (saturating,
  // like numel: the planner refuses such a tensor before anything is allocated).
  size_t bytes() const;
  std::string str() const;  // "[2,3] float32"
};

// A tensor whose data is known at load: initializers and tensor-valued attributes.
struct ConstTensor {
  TensorInfo info;
  std::vector<uint8_t> data;  // info.bytes() bytes, little-endian, C order

  template <class T>
  const T* as() const { return reinterpret_cast<const T*>(data.data()); }
  template <class T>
  T* as_mut() { return reinterpret_cast<T*>(data.data()); }
  // Integer (or bool) contents widened to int64 (Reshape shapes, axes, ...). Floating types are refused.
  std::vector<int64_t> to_int64() const;
};
using ConstTensorPtr = std::shared_ptr<ConstTensor>;

}  // namespace dnnx
