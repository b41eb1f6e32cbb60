// Gemm on cuBLAS (math mode from the precision, blas.h): Y is first filled with C broadcast to
// [M,N] (a copy, or the gather kernel when C is [N], [M,1], [1,1] or a scalar), then one SGEMM
// accumulates alpha * op(A) * op(B) onto beta * Y.
#include <climits>

#include "backends/cuda/blas.h"
#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/glue_kernels.h"

namespace dnnx::cuda {

namespace {

enum class BiasFill { None, Copy, Broadcast };

class GemmKernel final : public Kernel {
 public:
  GemmKernel(const CudaContext& ctx, GemmCall call, BiasFill fill, BroadcastDims c_dims)
      : ctx_(ctx), call_(call), fill_(fill), c_dims_(c_dims) {}

  void run(const KernelArgs& args) const override {
    float* y = args.out(0);
    const size_t y_elems = static_cast<size_t>(call_.m) * static_cast<size_t>(call_.n);
    if (y_elems == 0) return;
    if (fill_ == BiasFill::Copy) {
      check(cudaMemcpyAsync(y, args.in(2), y_elems * sizeof(float), cudaMemcpyDeviceToDevice, ctx_.stream),
            "cudaMemcpyAsync");
    } else if (fill_ == BiasFill::Broadcast) {
      launch_gather(args.in(2), y, sizeof(float), static_cast<int64_t>(y_elems), c_dims_, ctx_.stream);
    } else if (call_.k == 0) {  // an empty sum; cuBLAS may return without writing Y
      check(cudaMemsetAsync(y, 0, y_elems * sizeof(float), ctx_.stream), "cudaMemsetAsync");
      return;
    }
    row_major_gemm(ctx_, call_, args.in(0), args.in(1), y);
  }

 private:
  const CudaContext& ctx_;
  GemmCall call_;  // beta is 0 without a bias fill
  BiasFill fill_;
  BroadcastDims c_dims_;  // [M, N] with C's strides (0 along a broadcast dim)
};

KernelChoice make_gemm(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>& outputs) {
  GemmCall call;
  call.trans_a = node.attr_int("transA", 0) != 0;
  call.trans_b = node.attr_int("transB", 0) != 0;
  call.alpha = node.attr_float("alpha", 1.0f);
  const int64_t m = outputs[0].shape[0], n = outputs[0].shape[1];
  const int64_t k = call.trans_a ? inputs[0].info.shape[0] : inputs[0].info.shape[1];
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX) {
    node_fail<UnsupportedModelError>(node, "matrix dims M=" + std::to_string(m) + ", N=" + std::to_string(n) +
                                               ", K=" + std::to_string(k) + " exceed cuBLAS's 2^31-1");
  }
  call.m = static_cast<int>(m);
  call.n = static_cast<int>(n);
  call.k = static_cast<int>(k);
  BiasFill fill = BiasFill::None;
  BroadcastDims c_dims;
  const float beta = node.attr_float("beta", 1.0f);
  if (inputs.size() > 2 && inputs[2].present && beta != 0.0f) {
    call.beta = beta;
    const Shape& c = inputs[2].info.shape;  // [], [N], [1,N], [M,1], [M,N] or [1,1]
    const int64_t c_rows = c.size() == 2 ? c[0] : 1;
    const int64_t c_cols = c.empty() ? 1 : c.back();
    fill = c_rows == m && c_cols == n ? BiasFill::Copy : BiasFill::Broadcast;
    c_dims.rank = 2;
    c_dims.size[0] = m;
    c_dims.size[1] = n;
    c_dims.stride_a[0] = c_rows == 1 ? 0 : c_cols;
    c_dims.stride_a[1] = c_cols == 1 ? 0 : 1;
  }
  KernelChoice choice;
  choice.algorithm = fill == BiasFill::Broadcast ? "cublasSgemm (C broadcast by kernel)" : "cublasSgemm";
  choice.math = blas_math_name(ctx);
  choice.kernel = std::make_unique<GemmKernel>(ctx, call, fill, c_dims);
  return choice;
}

}  // namespace

void register_cuda_gemm_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Gemm", [&ctx](const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>& outputs) { return make_gemm(ctx, node, inputs, outputs); });
}

}  // namespace dnnx::cuda
