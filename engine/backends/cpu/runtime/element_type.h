// Kernels that only move elements (Gather, Slice, Split, Expand, Pad, ...) are written once
// per element size: a dnnx dtype on the CPU is 1 (bool), 4 or 8 bytes, moved as uint8_t,
// uint32_t or uint64_t. Kernels that compute are written once per C++ type (with_dtype).
#pragma once
#include <cstdint>
#include <memory>

#include "runtime/backend.h"
#include "ir/tensor.h"

namespace dnnx {

// make<Kernel<uint8_t>>, make<Kernel<uint32_t>> or make<Kernel<uint64_t>> by the dtype's size.
template <template <class> class KernelT, class... Args>
std::unique_ptr<Kernel> make_for_element_size(DType dtype, Args&&... args) {
  if (dtype_size(dtype) == sizeof(uint64_t)) {
    return std::make_unique<KernelT<uint64_t>>(std::forward<Args>(args)...);
  }
  if (dtype_size(dtype) == sizeof(uint8_t)) {
    return std::make_unique<KernelT<uint8_t>>(std::forward<Args>(args)...);
  }
  return std::make_unique<KernelT<uint32_t>>(std::forward<Args>(args)...);
}

// Calls fn(T{}) with T the C++ type of a numeric dtype (float, int32_t or int64_t): the
// arithmetic kernels. Bool has no arithmetic (the ops' inference refuses it first).
template <class Fn>
decltype(auto) with_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Int32: return fn(int32_t{});
    case DType::Int64: return fn(int64_t{});
    case DType::Float32: break;
    case DType::Float16: throw UnsupportedModelError("the CPU backend has no float16 kernels");
    case DType::BFloat16: throw UnsupportedModelError("the CPU backend has no bfloat16 kernels");
    case DType::Bool: throw UnsupportedModelError("the CPU backend has no bool kernel for this op");
  }
  return fn(float{});
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
