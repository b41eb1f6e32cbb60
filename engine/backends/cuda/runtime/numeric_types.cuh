// Shared by the *_kernels.cu files whose kernels take the numeric device types (float32, the
// half types, int32, int64): the type each computes in, and one dispatch over the dtype.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "ir/errors.h"
#include "ir/tensor.h"

namespace dnnx::cuda {

// The type a sum or a comparison uses: float for the half types, the element's own otherwise.
template <class T>
struct Acc {
  using type = T;
};
template <>
struct Acc<__half> {
  using type = float;
};
template <>
struct Acc<__nv_bfloat16> {
  using type = float;
};

// Whether v (an Acc type: float or an integer) is NaN; never for an integer.
template <class K>
__device__ inline bool is_nan_value(K v) {
  if constexpr (std::is_floating_point_v<K>) {
    return isnan(v);
  } else {
    return false;
  }
}

// Calls run(T{}) with T the element type of `dtype`; a DeviceError naming `kernel` for others.
template <class Run>
void for_numeric_dtype(DType dtype, const char* kernel, Run&& run) {
  switch (dtype) {
    case DType::Float32: run(float{}); break;
    case DType::Float16: run(__half{}); break;
    case DType::BFloat16: run(__nv_bfloat16{}); break;
    case DType::Int32: run(int32_t{}); break;
    case DType::Int64: run(int64_t{}); break;
    default: throw DeviceError(std::string(kernel) + ": no form for " + dtype_name(dtype) + " elements");
  }
}

}  // namespace dnnx::cuda
