// Kernels that only move elements (Gather, Slice, Split, Expand, Pad, ...) are written once
// per element size: a dnnx dtype is 1, 2, 4 or 8 bytes, moved as uint8_t, uint16_t, uint32_t or
// uint64_t. Kernels that compute are written once per C++ type: with_dtype (float32, int32,
// int64: most kernels) or with_number (every type with arithmetic: Note [cpu dtypes]).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "ir/tensor.h"

namespace dnnx {

// Note [cpu dtypes]: a CPU kernel file handles float32, int32, int64 and bool as it says; the
// other types reach a kernel only where its KernelEntry lists them (runtime/kernel_registry.h),
// which CpuBackend::plan_node checks. The one exception: float64, float16 and bfloat16 reach an
// op whose entry does not list them through a float32 kernel, converted at its edges
// (backends/cpu/runtime/widened_kernel.h), as today's models of those types ran.
// The lists for the entries:
//   movable_types() every type: kernels that move elements by size (Transpose, Concat, Gather, ...)
//   number_types()  every type with arithmetic but the halves (with_number below)
inline const std::vector<DType>& movable_types() {
  static const std::vector<DType> all = [] {
    std::vector<DType> out;
    for (int i = 0; i < kDTypeCount; ++i) out.push_back(static_cast<DType>(i));
    return out;
  }();
  return all;
}
inline const std::vector<DType>& number_types() {
  static const std::vector<DType> numbers = {DType::Float32, DType::Float64, DType::Int8,   DType::UInt8,
                                             DType::Int16,   DType::UInt16,  DType::Int32,  DType::UInt32,
                                             DType::Int64,   DType::UInt64};
  return numbers;
}

// make<Kernel<uint8_t>>, <uint16_t>, <uint32_t> or <uint64_t> by the dtype's size.
template <template <class> class KernelT, class... Args>
std::unique_ptr<Kernel> make_for_element_size(DType dtype, Args&&... args) {
  switch (dtype_size(dtype)) {
    case sizeof(uint64_t): return std::make_unique<KernelT<uint64_t>>(std::forward<Args>(args)...);
    case sizeof(uint16_t): return std::make_unique<KernelT<uint16_t>>(std::forward<Args>(args)...);
    case sizeof(uint8_t): return std::make_unique<KernelT<uint8_t>>(std::forward<Args>(args)...);
    default: return std::make_unique<KernelT<uint32_t>>(std::forward<Args>(args)...);
  }
}

// Calls fn(T{}) with T the C++ type of a numeric dtype (float, int32_t or int64_t): the
// arithmetic kernels. Bool has no arithmetic (the ops' inference refuses it first).
template <class Fn>
decltype(auto) with_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Int32: return fn(int32_t{});
    case DType::Int64: return fn(int64_t{});
    case DType::Float32: break;
    default:
      throw UnsupportedModelError(std::string("the CPU backend has no ") + dtype_name(dtype) + " kernel for this op");
  }
  return fn(float{});
}

// Calls fn(T{}) with T the C++ type of any dtype with arithmetic but the halves (those compute
// in float32: Note [cpu dtypes]): the elementwise arithmetic and comparisons, Cast.
template <class Fn>
decltype(auto) with_number(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Float64: return fn(double{});
    case DType::Int8: return fn(int8_t{});
    case DType::UInt8: return fn(uint8_t{});
    case DType::Int16: return fn(int16_t{});
    case DType::UInt16: return fn(uint16_t{});
    case DType::UInt32: return fn(uint32_t{});
    case DType::UInt64: return fn(uint64_t{});
    default: return with_dtype(dtype, std::forward<Fn>(fn));
  }
}

// with_number, and bool for Bool: the comparisons' inputs.
template <class Fn>
decltype(auto) with_number_or_bool(DType dtype, Fn&& fn) {
  if (dtype == DType::Bool) return fn(bool{});
  return with_number(dtype, std::forward<Fn>(fn));
}

// with_dtype, and bool for Bool (one byte holding 0 or 1, as C++'s bool is on every target we
// build for): Cast, the comparisons' inputs, Where's values.
template <class Fn>
decltype(auto) with_dtype_or_bool(DType dtype, Fn&& fn) {
  static_assert(sizeof(bool) == 1, "DType::Bool is one byte");
  if (dtype == DType::Bool) return fn(bool{});
  return with_dtype(dtype, std::forward<Fn>(fn));
}

}  // namespace dnnx
