#include "backends/cuda/dense/gemm_dense_rows.h"

#include <climits>

namespace dnnx::cuda {

namespace {

class DenseRowsKernel final : public Kernel {
 public:
  DenseRowsKernel(const CudaContext& ctx, DenseRows shape, bool has_c) : ctx_(ctx), shape_(shape), has_c_(has_c) {}

  void run(const KernelArgs& args) const override {
    launch_dense_rows(args.in(0), args.in(1), has_c_ ? args.in(2) : nullptr, args.out(0), shape_, ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  DenseRows shape_;
  bool has_c_;
};

}  // namespace

std::unique_ptr<Kernel> plan_dense_rows(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                                        const TensorInfo& y, DenseEpilogue epilogue, DenseRows& shape,
                                        std::string& why_not) {
  if (inputs[0].info.dtype != DType::Float32 || y.dtype != DType::Float32) {
    why_not = "fp32 storage only";
    return nullptr;
  }
  const bool trans_a = node.attr_int("transA", 0) != 0;
  const int64_t m = y.shape[0], n = y.shape[1];
  const int64_t k = trans_a ? inputs[0].info.shape[0] : inputs[0].info.shape[1];
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX) {
    why_not = "dims over 2^31-1";
    return nullptr;
  }
  shape.m = static_cast<int>(m);
  shape.n = static_cast<int>(n);
  shape.k = static_cast<int>(k);
  shape.trans_a = trans_a;
  shape.trans_b = node.attr_int("transB", 0) != 0;
  shape.alpha = node.attr_float("alpha", 1.0f);
  shape.beta = node.attr_float("beta", 1.0f);
  shape.epilogue = epilogue;
  const bool has_c = inputs.size() > 2 && inputs[2].present && shape.beta != 0.0f;
  if (has_c) {
    const Shape& c = inputs[2].info.shape;  // [], [N], [1,N], [M,1], [M,N] or [1,1]
    const int64_t c_rows = c.size() == 2 ? c[0] : 1;
    const int64_t c_cols = c.empty() ? 1 : c.back();
    shape.c_row_stride = c_rows == 1 ? 0 : c_cols;
    shape.c_col_stride = c_cols == 1 ? 0 : 1;
  }
  if (!dense_rows_supported(shape)) {
    why_not = epilogue == DenseEpilogue::Softmax && shape.n > kDenseSoftmaxMaxCols
                  ? "a softmax row of " + std::to_string(shape.n) + " values (the kernel holds up to " +
                        std::to_string(kDenseSoftmaxMaxCols) + ")"
                  : "an empty output or too many rows";
    return nullptr;
  }
  if (ctx.hooks.failure_of(kDenseRowsName) != ForcedFailure::None) {
    why_not = std::string(kDenseRowsName) + " fails (forced by DNNX_TEST_FAIL_ALGO)";
    return nullptr;
  }
  if (ctx.avoided(kDenseRowsName)) {
    why_not = std::string(kDenseRowsName) + " failed at run time";
    return nullptr;
  }
  return std::make_unique<DenseRowsKernel>(ctx, shape, has_c);
}

}  // namespace dnnx::cuda
