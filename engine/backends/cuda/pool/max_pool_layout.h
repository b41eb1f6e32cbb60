// How an ONNX MaxPool maps onto cuDNN or the direct kernel, shared by the forward (pool_cuda.cc)
// and its gradient (pool_grad_cuda.cc), so that the backward always runs the same way as the
// forward it differentiates.
#pragma once
#include <string>

#include "backends/cuda/runtime/cuda_handles.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "ops/conv/conv_geometry.h"

namespace dnnx::cuda {

// Why cuDNN cannot pool this window as ONNX means it ("" when it can: no dilations, the same
// pads at both ends, cuDNN's floor output size equal to ONNX's). When it can, fills `pool`
// (with `mode`), and the packed X and Y descriptors of `dtype` (NHWC with `channels_last`). `g` has at least 2 spatial dims.
std::string set_cudnn_max_pool(const ConvGeometry& g, const Shape& x, cudnnPoolingMode_t mode, PoolingDescriptor& pool,
                               TensorDescriptor& x_desc, TensorDescriptor& y_desc, DType dtype = DType::Float32,
                               bool channels_last = false);

// The direct kernels' 3-D window (unit dims first) for ONNX's geometry over X [N, C, ...]: max
// pool, its gradient and average pool (which adds the end pads it needs).
Window3d pool_window(const ConvGeometry& onnx, const Shape& x);

}  // namespace dnnx::cuda
