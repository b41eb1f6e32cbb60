// Element types, shapes and constant tensors: the engine's own, never the ONNX protobuf's.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace dnnx {

// Note [dtypes]: the engine's element types are ONNX's, stored as numpy (and ml_dtypes, which
// onnx's numpy_helper uses) stores them: little-endian, C order, one element per slot.
//   Float32, Float64, Float16, BFloat16       IEEE binary32/64/16 and bfloat16 (float32's top half)
//   Int8..Int64, UInt8..UInt64                two's complement / unsigned integers
//   Bool                                      one byte holding 0 or 1 (numpy's bool_, DLPack's kBool)
//   Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ   one byte each (ml_dtypes' float8_*)
//   Int4, UInt4, Float4E2M1                   one byte per element (ml_dtypes' unpacked numpy
//                                             form; ONNX's raw_data packs two per byte: the
//                                             importer unpacks them)
//   String                                    a pointer per element (Note [string tensors]:
//                                             `const std::string*`, null for ""; numpy's object)
// Float16 and BFloat16 also serve half storage: the half_storage pass (runtime/passes/
// half_storage.cc) makes such values in a precision="fp16"/"bf16" model on a device.
// The float8, 4-bit and float4 types are storage-only: Cast, CastLike and the data-movement ops.
// New types go at the end: DType crosses the device ABI (kDeviceAbiVersion).
enum class DType {
  Float32, Int32, Int64, Float16, Bool, BFloat16,
  Float64, Int8, UInt8, Int16, UInt16, UInt32, UInt64,
  Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Int4, UInt4, Float4E2M1,
  String,
};
// One past the last DType, for tables and loops over every type.
constexpr int kDTypeCount = static_cast<int>(DType::String) + 1;

// Whether `t` is one of the 2-byte float storage types of half storage (float16, bfloat16).
inline bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
// Whether `t` is a floating-point type that ops compute with (float32, float64, float16, bfloat16).
inline bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64 || is_half(t); }
// Whether `t` is a signed or unsigned integer type of 8 to 64 bits (not the 4-bit ones, not bool).
inline bool is_integer(DType t) {
  return t == DType::Int32 || t == DType::Int64 || (t >= DType::Int8 && t <= DType::UInt64);
}
// Whether `t` is an index type (int32, int64): Gather's indices, Reshape's shape, ...
inline bool is_index(DType t) { return t == DType::Int32 || t == DType::Int64; }
// Whether `t` is a storage-only type: the float8 types, int4, uint4, float4e2m1.
inline bool is_storage_only(DType t) { return t >= DType::Float8E4M3FN && t <= DType::Float4E2M1; }

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
// numpy's (and ml_dtypes') name: "float32", "uint8", "bfloat16", "float8_e4m3fn", "int4", ...
const char* dtype_name(DType t);
// The type named `name` (dtype_name's inverse); false for none.
bool dtype_from_name(const std::string& name, DType& out);

// The float8 types and float4e2m1 from a double (round to nearest even, once) and to float32 (exact).
// `saturate`: a value past the largest finite one becomes that value (ONNX Cast's saturate=1)
// rather than inf, or NaN for the types without inf (e4m3fn, e4m3fnuz, e5m2fnuz, float4e2m1
// always saturates). int4/uint4 are not floats: Cast handles them as integers.
uint8_t float_to_minifloat(double value, DType t, bool saturate);
float minifloat_to_float(uint8_t bits, DType t);

using Shape = std::vector<int64_t>;

// The element count. Overflow-safe (Note [absurd sizes] in runtime/size_check.h): a product past
// int64 saturates to INT64_MAX (never a wrapped value), so a shape of absurd dims reads as too
// large, never as small. A negative dim (a symbolic one, -1) gives a negative count.
int64_t numel(const Shape& s);
std::string shape_str(const Shape& s);  // "[2,3,4]"

// The element strides of a packed (row-major) tensor of shape `s`: the last dim's is 1.
inline Shape packed_strides(const Shape& s) {
  Shape strides(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) strides[d - 1] = strides[d] * s[d];
  return strides;
}

struct TensorInfo {
  Shape shape;
  DType dtype = DType::Float32;
  // The bytes it takes; SIZE_MAX when that does not fit a size_t or a dim is negative (saturating,
  // like numel: the planner refuses such a tensor before anything is allocated).
  size_t bytes() const;
  std::string str() const;  // "[2,3] float32"
};

// Note [string tensors]: a string element is a `const std::string*` (8 bytes; null reads as "").
// The strings themselves live in a StringStore that outlives every tensor pointing into it: a
// constant's own (ConstTensor::strings), a run's (RunIO::strings, KernelArgs::strings: where a
// kernel puts the strings it makes), a plan-time fold's (the folded constant's). Tensors of
// pointers move like any 8-byte type, so every data-movement kernel takes strings as they are;
// only the kernels that read or make strings know the type. Strings are host values: the CPU
// backend runs them, a device backend refuses them.
class StringStore {
 public:
  // A pointer to a copy of `value` that stays valid as long as this store lives (never moved).
  const std::string* add(std::string value) {
    strings_.push_back(std::move(value));
    return &strings_.back();
  }
  // Keeps `other` alive as long as this store: for tensors whose elements point into both.
  void keep(std::shared_ptr<const StringStore> other) { kept_.push_back(std::move(other)); }
  size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;  // a deque never moves its elements as it grows
  std::vector<std::shared_ptr<const StringStore>> kept_;
};
using StringPtr = const std::string*;
// The string a string element points to ("" for null).
inline const std::string& string_of(StringPtr p) {
  static const std::string empty;
  return p ? *p : empty;
}

// A tensor whose data is known at load: initializers and tensor-valued attributes.
struct ConstTensor {
  TensorInfo info;
  std::vector<uint8_t> data;  // info.bytes() bytes, little-endian, C order
  // A string tensor's strings, which its elements (data) point into (Note [string tensors]);
  // shared by every copy of the tensor.
  std::shared_ptr<StringStore> strings;

  template <class T>
  const T* as() const { return reinterpret_cast<const T*>(data.data()); }
  template <class T>
  T* as_mut() { return reinterpret_cast<T*>(data.data()); }
  // Integer (or bool) contents widened to int64 (Reshape shapes, axes, ...). Floating types are refused;
  // uint64 values past INT64_MAX wrap (no shape, axis or count is that large).
  std::vector<int64_t> to_int64() const;
};
using ConstTensorPtr = std::shared_ptr<ConstTensor>;

}  // namespace dnnx
