#include <algorithm>
#include <climits>

#include "backends/cuda/conv/conv_gemm.h"
#include "backends/cuda/dense/lt_matmul.h"

namespace dnnx::cuda {

namespace {

constexpr size_t kResidualInput = 3;

class ConvGemmKernel final : public Kernel {
 public:
  ConvGemmKernel(const CudaContext& ctx, GemmCall call, std::unique_ptr<LtMatmul> lt, const ConvGemm& shape)
      : ctx_(ctx), call_(call), lt_(std::move(lt)), shape_(shape) {}

  // x [N*H*W, C], w [K, C], b [K] (or none), z [N*H*W, K] (Conv+Add+Relu) -> y [N*H*W, K]
  void run(const KernelArgs& args) const override {
    lt_->run(ctx_, call_, args.in<void>(0), args.in<void>(1), shape_.has_bias ? args.in<void>(2) : nullptr,
             args.out<void>(0), args.workspace, shape_.residual ? args.in<void>(kResidualInput) : nullptr);
  }

 private:
  const CudaContext& ctx_;
  GemmCall call_;
  std::unique_ptr<LtMatmul> lt_;
  ConvGemm shape_;
};

}  // namespace

std::string conv_gemm_unsupported(const ConvGeometry& g, const Shape& x, bool channels_last) {
  if (!channels_last) return "the data is NCHW (only a channels-last 1x1 conv is one GEMM)";
  if (g.rank() != 2 || g.group != 1) return "not a 2-D conv of one group";
  for (size_t i = 0; i < g.rank(); ++i) {
    if (g.kernel[i] != 1 || g.strides[i] != 1 || g.pads_begin[i] != 0 || g.pads_end[i] != 0) {
      return "not a 1x1 window with stride 1 and no pads";
    }
  }
  if (x[0] * x[2] * x[3] > INT_MAX || x[1] > INT_MAX) return "over cuBLAS's 2^31-1 rows";
  return "";
}

std::unique_ptr<Kernel> plan_conv_gemm(const CudaContext& ctx, const ConvGemm& shape, size_t workspace_limit,
                                       size_t& workspace_bytes) {
  GemmCall call;
  call.trans_b = true;
  call.m = static_cast<int>(shape.rows);
  call.n = static_cast<int>(shape.filters);
  call.k = static_cast<int>(shape.channels);
  call.dtype = shape.dtype;
  const cublasLtEpilogue_t epilogue =
      shape.has_bias ? (shape.relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                     : (shape.relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
  auto lt = std::make_unique<LtMatmul>();
  if (!lt->plan(ctx, call, epilogue, std::min(kLtWorkspaceLimit, workspace_limit))) return nullptr;
  workspace_bytes = lt->workspace_bytes();
  return std::make_unique<ConvGemmKernel>(ctx, call, std::move(lt), shape);
}

}  // namespace dnnx::cuda
