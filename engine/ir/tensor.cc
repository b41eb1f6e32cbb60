#include "ir/tensor.h"

#include <cstdint>

#include "ir/errors.h"

namespace dnnx {

namespace {

struct DTypeTraits {
  const char* name;  // numpy's / ml_dtypes'
  size_t size;
};

// In DType's order (Note [dtypes]).
constexpr DTypeTraits kTraits[kDTypeCount] = {
    {"float32", 4}, {"int32", 4}, {"int64", 8}, {"float16", 2}, {"bool", 1}, {"bfloat16", 2},
    {"float64", 8}, {"int8", 1}, {"uint8", 1}, {"int16", 2}, {"uint16", 2}, {"uint32", 4}, {"uint64", 8},
    {"float8_e4m3fn", 1}, {"float8_e4m3fnuz", 1}, {"float8_e5m2", 1}, {"float8_e5m2fnuz", 1},
    {"int4", 1}, {"uint4", 1}, {"float4_e2m1fn", 1}, {"string", sizeof(const std::string*)},
};

bool valid(DType t) { return static_cast<int>(t) >= 0 && static_cast<int>(t) < kDTypeCount; }

}  // namespace

size_t dtype_size(DType t) { return valid(t) ? kTraits[static_cast<int>(t)].size : 0; }

const char* dtype_name(DType t) { return valid(t) ? kTraits[static_cast<int>(t)].name : "?"; }

bool dtype_from_name(const std::string& name, DType& out) {
  for (int i = 0; i < kDTypeCount; ++i) {
    if (name == kTraits[i].name) {
      out = static_cast<DType>(i);
      return true;
    }
  }
  return false;
}

uint16_t float_to_half(float value) {
  uint32_t f = 0;
  std::memcpy(&f, &value, sizeof(f));
  const uint32_t sign = (f >> 16) & 0x8000u;
  const uint32_t exp = (f >> 23) & 0xffu;
  uint32_t mant = f & 0x7fffffu;
  if (exp == 0xffu) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));  // inf, NaN
  const int e = static_cast<int>(exp) - 127 + 15;  // the half's biased exponent
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow: inf
  if (e <= 0) {  // a half subnormal (or zero): shift the full significand down, then round
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;  // 24-bit significand -> 10-bit subnormal field
    uint32_t half = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1), midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // a carry may round up to inf: right
  return static_cast<uint16_t>(sign | half);
}

float half_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  uint32_t mant = bits & 0x3ffu;
  uint32_t f = 0;
  if (exp == 0x1fu) {
    f = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    f = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  } else if (mant == 0) {
    f = sign;
  } else {  // subnormal: normalize
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while (!(mant & 0x400u));
    f = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  float out = 0;
  std::memcpy(&out, &f, sizeof(out));
  return out;
}

int64_t numel(const Shape& s) {
  for (int64_t d : s) {
    if (d == 0) return 0;  // empty, however large the other dims
  }
  int64_t n = 1;
  for (int64_t d : s) {
    const bool negative = (n < 0) != (d < 0);
    if (__builtin_mul_overflow(n, d, &n)) return negative ? INT64_MIN : INT64_MAX;
  }
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

uint16_t float_to_bfloat16(float value) {
  uint32_t f = 0;
  std::memcpy(&f, &value, sizeof(f));
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((f >> 16) | 0x40u);  // NaN: quiet
  const uint32_t round = 0x7fffu + ((f >> 16) & 1u);  // to nearest, ties to the even upper half
  return static_cast<uint16_t>((f + round) >> 16);
}

float bfloat16_to_float(uint16_t bits) {
  const uint32_t f = static_cast<uint32_t>(bits) << 16;
  float out = 0;
  std::memcpy(&out, &f, sizeof(out));
  return out;
}

uint16_t float_to_storage(float value, DType half) {
  return half == DType::BFloat16 ? float_to_bfloat16(value) : float_to_half(value);
}

float storage_to_float(uint16_t bits, DType half) {
  return half == DType::BFloat16 ? bfloat16_to_float(bits) : half_to_float(bits);
}

size_t TensorInfo::bytes() const {
  const int64_t n = numel(shape);
  size_t out = 0;
  if (n < 0 || n == INT64_MAX || __builtin_mul_overflow(static_cast<size_t>(n), dtype_size(dtype), &out)) {
    return SIZE_MAX;
  }
  return out;
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
    case DType::Bool:
    case DType::UInt8:
      for (int64_t i = 0; i < n; ++i) out[i] = as<uint8_t>()[i];
      break;
    case DType::Int8:
      for (int64_t i = 0; i < n; ++i) out[i] = as<int8_t>()[i];
      break;
    case DType::Int16:
      for (int64_t i = 0; i < n; ++i) out[i] = as<int16_t>()[i];
      break;
    case DType::UInt16:
      for (int64_t i = 0; i < n; ++i) out[i] = as<uint16_t>()[i];
      break;
    case DType::UInt32:
      for (int64_t i = 0; i < n; ++i) out[i] = as<uint32_t>()[i];
      break;
    case DType::UInt64:
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int64_t>(as<uint64_t>()[i]);
      break;
    default:
      throw InvalidModelError(std::string("expected an integer tensor, got ") + dtype_name(info.dtype));
  }
  return out;
}

}  // namespace dnnx
