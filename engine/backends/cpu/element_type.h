// Kernels that only move elements (Gather, Slice, Split, Expand, Pad, ...) are written once
// per element size: every dnnx dtype is 4 or 8 bytes, moved as uint32_t or uint64_t.
#pragma once
#include <cstdint>
#include <memory>

#include "runtime/backend.h"
#include "ir/tensor.h"

namespace dnnx {

// make<Kernel<uint32_t>> or make<Kernel<uint64_t>> by the dtype's size.
template <template <class> class KernelT, class... Args>
std::unique_ptr<Kernel> make_for_element_size(DType dtype, Args&&... args) {
  if (dtype_size(dtype) == sizeof(uint64_t)) {
    return std::make_unique<KernelT<uint64_t>>(std::forward<Args>(args)...);
  }
  return std::make_unique<KernelT<uint32_t>>(std::forward<Args>(args)...);
}

// Calls fn(T{}) with T the C++ type of a dtype (float, int32_t or int64_t).
template <class Fn>
decltype(auto) with_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Int32: return fn(int32_t{});
    case DType::Int64: return fn(int64_t{});
    case DType::Float32: break;
    case DType::Float16: throw UnsupportedModelError("the CPU backend has no float16 kernels");
  }
  return fn(float{});
}

}  // namespace dnnx
