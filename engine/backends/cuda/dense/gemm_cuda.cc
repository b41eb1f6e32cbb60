// Gemm and Gemm+Relu on cuBLAS (math from the precision, blas.h). Two paths:
//   cuBLASLt   one cublasLtMatmul whose epilogue adds C as a bias and applies the Relu
//              (CUBLASLT_EPILOGUE_BIAS, _RELU_BIAS, _RELU), fp32 compute CUBLAS_COMPUTE_32F (no
//              TF32; CUBLAS_COMPUTE_32F_FAST_TF32 at precision tf32): when C is absent, or is a
//              row vector ([N] or [1,N]) with beta = 1, and K > 0
//   SGEMM      Y is first filled with C broadcast to [M,N] (a copy, or the gather kernel when C is
//              [M,1], [1,1] or a scalar), then one SGEMM accumulates alpha * op(A) * op(B) onto
//              beta * Y, then (Gemm+Relu) cudnnActivationForward in place
// The SGEMM path also takes over when cuBLASLt offers no algorithm for the shapes.
// Before both, a Gemm of a few rows (batch 1) or a narrow one (a classifier head: Note [narrow
// Gemms]) in fp32 storage runs as the dense rows kernel (gemm_dense_rows.h): one warp per output
// column with the bias and Relu applied, one launch where cuBLAS's tiles would sit mostly idle.
// Float16 (precision="fp16"): A, B, C and Y are CUDA_R_16F on both paths, the compute type
// CUBLAS_COMPUTE_32F (tensor ops, fp32 accumulation, float alpha/beta); the bias epilogue reads a
// half bias (cuBLASLt's bias type defaults to Y's); the SGEMM path becomes cublasGemmEx.
// BFloat16 (precision="bf16") the same with CUDA_R_16BF.
#include <climits>

#include "backends/cuda/dense/blas.h"
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/dense/gemm_dense_rows.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/dense/lt_matmul.h"
#include "backends/cuda/runtime/tensor_desc.h"

namespace dnnx::cuda {

namespace {

enum class BiasFill { None, Copy, Broadcast };

// The dense rows kernel's share (Note [narrow Gemms]): a few rows (batch 1), up to kDenseRows
// rows and kDenseRowsMacs multiply-adds; or a narrow layer, up to kDenseNarrowCols columns and
// kDenseNarrowMacs multiply-adds, at any batch.
constexpr double kDenseRowsMacs = 1 << 22;
constexpr int kDenseNarrowCols = 64;
constexpr double kDenseNarrowMacs = 1 << 24;

// Note [narrow Gemms]: a classifier head (N = 10 classes) is too narrow for cuBLAS's tiles. At
// LeNet's fine-tuning batch 256 (256x500 by 500x10) cuBLASLt's heuristic pick was a three-kernel
// split-K path of 18.7 us on an H200, its fastest timed candidate 13.3 us; the dense rows kernel,
// one warp per output column and group of 4 rows, reading B (20 KB) from L2 per row group, took
// 6.2 us in one launch. bench/probes/probe_dense_rows.py weighs it against both over narrow shapes
// (bench/RESULTS_CUDA.md): it wins up to 2^24 multiply-adds (256x4096x16: 18.6 against 24.8 us;
// 1024x500x32: 10.7 against 11.6) and loses past them, where each column's warps re-read A
// (4096x500x10, 2^24.3: 15.3 against 13.8; 8192x256x10: 22.2 against 10.9). Both planner policies
// take the rule (as Gemm+Softmax's, gemm_softmax_cuda.cc), so that heuristic and exhaustive plans
// compute the same bits.

// Takes the dense rows kernel into `choice` for a Gemm of a few rows or few columns; false (the
// reason in `choice.rejected`) otherwise.
bool take_dense_rows(const CudaContext& ctx, bool relu, const Node& node, const std::vector<ValueInfo>& inputs,
                     const TensorInfo& y, KernelChoice& choice) {
  DenseRows shape;
  std::string why_not;
  std::unique_ptr<Kernel> kernel =
      plan_dense_rows(ctx, node, inputs, y, relu ? DenseEpilogue::Relu : DenseEpilogue::None, shape, why_not);
  const bool few_rows = shape.m <= kDenseRows && shape.macs() <= kDenseRowsMacs;
  const bool narrow = shape.n <= kDenseNarrowCols && shape.macs() <= kDenseNarrowMacs;
  if (kernel && !few_rows && !narrow) {
    why_not = std::to_string(shape.m) + " rows of " + std::to_string(shape.n) + " columns: over the small-batch bounds (" +
              std::to_string(kDenseRows) + " rows, 2^22 multiply-adds) and the narrow-layer bounds (" +
              std::to_string(kDenseNarrowCols) + " columns, 2^24 multiply-adds)";
    kernel.reset();
  }
  if (!kernel) {
    choice.rejected.push_back({kDenseRowsName, why_not});
    return false;
  }
  const bool has_c = inputs.size() > 2 && inputs[2].present && shape.beta != 0.0f;
  choice.kernel = std::move(kernel);
  choice.algorithm = std::string(kDenseRowsName) + (has_c ? (relu ? " (bias+relu fused)" : " (bias fused)") : (relu ? " (relu fused)" : ""));
  choice.candidate = kDenseRowsName;
  choice.math = kDenseRowsMath;
  choice.rejected.push_back({"cublasLtMatmul", few_rows ? std::to_string(shape.m) + " row(s): the dense rows kernel serves small batches"
                                                        : std::to_string(shape.n) + " columns: too narrow for cuBLAS's tiles"});
  return true;
}

class LtGemmKernel final : public Kernel {
 public:
  LtGemmKernel(const CudaContext& ctx, GemmCall call, std::unique_ptr<LtMatmul> lt, bool has_bias)
      : ctx_(ctx), call_(call), lt_(std::move(lt)), has_bias_(has_bias) {}

  void run(const KernelArgs& args) const override {
    if (call_.m == 0 || call_.n == 0) return;
    lt_->run(ctx_, call_, args.in<void>(0), args.in<void>(1), has_bias_ ? args.in<void>(2) : nullptr, args.out<void>(0),
             args.workspace);
  }

 private:
  const CudaContext& ctx_;
  GemmCall call_;
  std::unique_ptr<LtMatmul> lt_;
  bool has_bias_;
};

class GemmKernel final : public Kernel {
 public:
  GemmKernel(const CudaContext& ctx, GemmCall call, BiasFill fill, BroadcastDims c_dims, bool relu)
      : ctx_(ctx), call_(call), fill_(fill), c_dims_(c_dims), relu_(relu) {
    const int64_t n = static_cast<int64_t>(call.m) * call.n;
    if (relu_ && n > 0) {
      check(cudnnSetActivationDescriptor(activation_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0),
            "cudnnSetActivationDescriptor");
      set_tensor(tensor_, {1, n, 1, 1}, call.dtype);
    }
  }

  void run(const KernelArgs& args) const override {
    void* y = args.out<void>(0);
    const size_t y_elems = static_cast<size_t>(call_.m) * static_cast<size_t>(call_.n);
    const size_t elem = dtype_size(call_.dtype);
    if (y_elems == 0) return;
    if (fill_ == BiasFill::Copy) {
      check(cudaMemcpyAsync(y, args.in<void>(2), y_elems * elem, cudaMemcpyDeviceToDevice, ctx_.stream),
            "cudaMemcpyAsync");
    } else if (fill_ == BiasFill::Broadcast) {
      launch_gather(args.in<void>(2), y, elem, static_cast<int64_t>(y_elems), c_dims_, ctx_.stream);
    } else if (call_.k == 0) {  // an empty sum; cuBLAS may return without writing Y
      check(cudaMemsetAsync(y, 0, y_elems * elem, ctx_.stream), "cudaMemsetAsync");
      return;  // relu(0) = 0
    }
    row_major_gemm(ctx_, call_, args.in<void>(0), args.in<void>(1), y);
    if (relu_) {
      const float one = 1.0f, zero = 0.0f;
      check(cudnnActivationForward(ctx_.cudnn, activation_, &one, tensor_, y, &zero, tensor_, y),
            "cudnnActivationForward");
    }
  }

 private:
  const CudaContext& ctx_;
  GemmCall call_;  // beta is 0 without a bias fill
  BiasFill fill_;
  BroadcastDims c_dims_;  // [M, N] with C's strides (0 along a broadcast dim)
  bool relu_;
  ActivationDescriptor activation_;
  TensorDescriptor tensor_;
};

KernelChoice make_gemm(const CudaContext& ctx, bool relu, const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>& outputs) {
  GemmCall call;
  call.trans_a = node.attr_int("transA", 0) != 0;
  call.trans_b = node.attr_int("transB", 0) != 0;
  call.alpha = node.attr_float("alpha", 1.0f);
  call.dtype = inputs[0].info.dtype;
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
  const bool has_c = inputs.size() > 2 && inputs[2].present && beta != 0.0f;
  bool row_bias = false;  // C is [N] or [1,N] with beta 1: cuBLASLt's bias epilogue
  if (has_c) {
    call.beta = beta;
    const Shape& c = inputs[2].info.shape;  // [], [N], [1,N], [M,1], [M,N] or [1,1]
    const int64_t c_rows = c.size() == 2 ? c[0] : 1;
    const int64_t c_cols = c.empty() ? 1 : c.back();
    row_bias = beta == 1.0f && !c.empty() && c_rows == 1 && c_cols == n;
    fill = c_rows == m && c_cols == n ? BiasFill::Copy : BiasFill::Broadcast;
    c_dims.rank = 2;
    c_dims.size[0] = m;
    c_dims.size[1] = n;
    c_dims.stride_a[0] = c_rows == 1 ? 0 : c_cols;
    c_dims.stride_a[1] = c_cols == 1 ? 0 : 1;
  }
  KernelChoice choice;
  if (take_dense_rows(ctx, relu, node, inputs, outputs[0], choice)) return choice;
  choice.math = blas_math_name(ctx, call.dtype);
  if (m > 0 && n > 0 && k > 0 && (!has_c || row_bias)) {
    const cublasLtEpilogue_t epilogue = has_c ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                              : (relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
    auto lt = std::make_unique<LtMatmul>();
    GemmCall lt_call = call;
    lt_call.beta = 0.0f;
    if (lt->plan(ctx, lt_call, epilogue, std::min(kLtWorkspaceLimit, ctx.options.workspace_limit))) {
      choice.algorithm = std::string("cublasLtMatmul") +
                         (has_c ? (relu ? " (bias+relu epilogue)" : " (bias epilogue)") : (relu ? " (relu epilogue)" : "")) +
                         lt->choice_text();
      choice.workspace_bytes = lt->workspace_bytes();
      choice.time_ms = lt->choice().time_ms;
      for (const Rejected& r : lt->choice().rejected) choice.rejected.push_back(r);
      choice.kernel = std::make_unique<LtGemmKernel>(ctx, lt_call, std::move(lt), has_c);
      return choice;
    }
    choice.rejected.push_back({"cublasLtMatmul", "cuBLASLt has no algorithm for these shapes"});
  }
  const std::string gemm = call.half() ? "cublasGemmEx" : "cublasSgemm";
  choice.algorithm = (fill == BiasFill::Broadcast ? gemm + " (C broadcast by kernel)" : gemm) +
                     (relu ? " + cudnnActivationForward (relu)" : "");
  if (!has_c) call.beta = 0.0f;
  if (relu && m * n > INT_MAX) {
    node_fail<UnsupportedModelError>(node, "Y has more than 2^31-1 elements (cuDNN's Relu limit)");
  }
  choice.kernel = std::make_unique<GemmKernel>(ctx, call, fill, c_dims, relu);
  return choice;
}

}  // namespace

void register_cuda_gemm_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Gemm", [&ctx](const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>& outputs) { return make_gemm(ctx, false, node, inputs, outputs); })
      .with_dtypes(kFloatAndHalves);
  r.add("Gemm+Relu", [&ctx](const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>& outputs) {
    return make_gemm(ctx, true, node, inputs, outputs);
  }).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
