// Launchers of the Pow and PRelu kernels (pow_prelu_kernels.cu). `dims` is the broadcast of the
// two operands to the output (broadcast_plan.h; rank 0: no broadcast), a the first operand (Pow's
// base, PRelu's X), b the second (the exponent, the slope). Each queues on `stream` and checks
// the launch.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "backends/cuda/layout/glue_kernels.h"

namespace dnnx::cuda {

enum class PairKind { Pow, PRelu };

// y[i] = a^b or (a < 0 ? b a : a); elements of `dtype`: float32, float16 or bfloat16 (float
// arithmetic).
void launch_pow_prelu(PairKind kind, const void* a, const void* b, void* y, int64_t n, const BroadcastDims& dims,
                      DType dtype, cudaStream_t stream);

// The output-shaped terms of the gradient, each summed to its side afterwards (float32; a null
// term is not written), with dy the output's gradient and y the kept output:
//   Pow    term_a = b == 0 ? 0 : dy b a^(b-1)      term_b = a == 0 && b >= 0 ? 0 : dy y ln a
//   PRelu  term_a = a < 0 ? dy b : dy (dX itself)   term_b = a < 0 ? dy a : 0
void launch_pow_prelu_grad_terms(PairKind kind, const float* a, const float* b, const float* y, const float* dy,
                                 float* term_a, float* term_b, int64_t n, const BroadcastDims& dims,
                                 cudaStream_t stream);

}  // namespace dnnx::cuda
