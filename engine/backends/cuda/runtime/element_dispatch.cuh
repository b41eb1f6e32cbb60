// The element types of the glue kernels under precision="fp16" (Note [half storage]): a kernel
// templated on T loads float(x[i]), computes in float and stores T(result), so float16 storage
// costs one rounding per stored value and nothing else.
#pragma once
#include <cuda_fp16.h>

namespace dnnx::cuda {

// Calls fn(T{}) with T = __half when `half`, else float (host code: fn launches the kernel<T>).
template <class Fn>
void with_element(bool half, Fn&& fn) {
  if (half) {
    fn(__half{});
  } else {
    fn(float{});
  }
}

}  // namespace dnnx::cuda
