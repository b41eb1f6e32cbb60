// Gemm, Gemm+Relu and Gemm+Softmax through the dense rows kernel (dense_rows.h): its shape for a
// Gemm node, and the planned kernel. gemm_cuda.cc takes it for a few rows (a GEMV-like layer at
// batch 1, where cuBLAS's tiles sit mostly idle), gemm_softmax_cuda.cc for small layers.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/backend/cuda_context.h"
#include "backends/cuda/dense/dense_rows.h"
#include "runtime/backend.h"

namespace dnnx::cuda {

constexpr const char* kDenseRowsName = "dense rows kernel";  // as plan() and DNNX_TEST_FAIL_ALGO name it
constexpr const char* kDenseRowsMath = "fp32 (FMA, dense rows kernel, no TF32)";

// The dense rows kernel for a Gemm node (its inputs, output y) followed by `epilogue`; null with
// the reason in `why_not` where the kernel does not apply (float16 storage, an empty output, too
// many rows, a softmax row over kDenseSoftmaxMaxCols, a forced test failure). `shape` is filled
// either way when the node's dims are known.
std::unique_ptr<Kernel> plan_dense_rows(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                                        const TensorInfo& y, DenseEpilogue epilogue, DenseRows& shape,
                                        std::string& why_not);

}  // namespace dnnx::cuda
