// A channels-last 1x1 convolution (stride 1, no pads, one group) is one GEMM: NHWC X is the
// row-major matrix [N*H*W, C], a KRSC filter of 1x1 is W [K, C], and Y = X W^T is NHWC Y
// [N*H*W, K]. cuBLASLt runs it with the bias, the Relu and the residual z (Conv+Add+Relu: the
// GEMM's C, beta = 1) in the epilogue: relu(X W^T + z + b). PyTorch's channels-last runs take
// cuBLAS for these convs too; cuDNN's implicit-GEMM kernels are up to 3x slower on them (H200,
// fp16, ResNet-50's 1x1 layers).
#pragma once
#include <memory>
#include <string>

#include "backends/cuda/backend/cuda_context.h"
#include "runtime/backend.h"
#include "ops/conv/conv_geometry.h"

namespace dnnx::cuda {

struct ConvGemm {
  int64_t rows = 0;  // N * H * W
  int64_t channels = 0, filters = 0;
  DType dtype = DType::Float32;  // of X, W, B, z and Y: float32 or a half type
  bool has_bias = false, relu = false, residual = false;
};

// Why this conv is no such GEMM ("" when it is): `g` is its geometry, `x_nchw` ONNX's X dims.
std::string conv_gemm_unsupported(const ConvGeometry& g, const Shape& x_nchw, bool channels_last);

// The planned cuBLASLt kernel and its workspace, or nullptr when cuBLASLt has no algorithm.
std::unique_ptr<Kernel> plan_conv_gemm(const CudaContext& ctx, const ConvGemm& shape, size_t workspace_limit,
                                       size_t& workspace_bytes);

}  // namespace dnnx::cuda
