// The in-place activation pass after a conv (Note [conv activations on cuda], conv_activation.h):
// one thread per element, grid-stride, float arithmetic on float32, float16 or bfloat16 elements
// (the formulas: activation_value.cuh).
#include "backends/cuda/conv/conv_activation.h"
#include "backends/cuda/conv/activation_value.cuh"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

template <ConvActivationKind K, class T>
__global__ void conv_activation_kernel(T* y, int64_t n, float lo, float hi) {
  DNNX_GRID_LOOP(i, n) { y[i] = T(conv_activation_value<K>(float(y[i]), lo, hi)); }
}

template <ConvActivationKind K, class T>
void launch_kind(T* y, int64_t n, float lo, float hi, cudaStream_t stream) {
  conv_activation_kernel<K, T><<<grid_for(n), kBlock, 0, stream>>>(y, n, lo, hi);
}

}  // namespace

void launch_conv_activation(const ConvActivation& act, void* y, int64_t n, DType dtype, cudaStream_t stream) {
  if (n == 0 || act.kind == ConvActivationKind::None) return;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    T* t = static_cast<T*>(y);
    switch (act.kind) {
      case ConvActivationKind::Swish: launch_kind<ConvActivationKind::Swish>(t, n, act.lo, act.hi, stream); break;
      case ConvActivationKind::HardSwish: launch_kind<ConvActivationKind::HardSwish>(t, n, act.lo, act.hi, stream); break;
      case ConvActivationKind::Clip: launch_kind<ConvActivationKind::Clip>(t, n, act.lo, act.hi, stream); break;
      case ConvActivationKind::None: break;
    }
  });
  check_launch("conv activation kernel");
}

}  // namespace dnnx::cuda
