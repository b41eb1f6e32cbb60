// The element types of the glue kernels under half storage (Note [half storage]): a kernel
// templated on T loads float(x[i]), computes in float and stores T(result), so float16
// (precision="fp16") or bfloat16 ("bf16") storage costs one rounding per stored value (to
// nearest even) and nothing else. Both conversions are native instructions from sm_80 on, where
// the CMake architectures start (__nv_bfloat16's float conversions exist there in device code).
#pragma once
#include <string>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "ir/errors.h"
#include "ir/tensor.h"

namespace dnnx::cuda {

// Calls fn(T{}) with T the element type of `dtype`: float for Float32, __half for Float16,
// __nv_bfloat16 for BFloat16 (host code: fn launches the kernel<T>). Any other type is the
// caller's mistake (its plan function admits float types only): DeviceError.
template <class Fn>
void with_element(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Float32: fn(float{}); return;
    case DType::Float16: fn(__half{}); return;
    case DType::BFloat16: fn(__nv_bfloat16{}); return;
    default: break;
  }
  throw DeviceError(std::string("no CUDA float kernel for ") + dtype_name(dtype) + " elements");
}

}  // namespace dnnx::cuda
