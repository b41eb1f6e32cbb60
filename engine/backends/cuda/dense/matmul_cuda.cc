// MatMul on cuBLAS (math mode from the precision, blas.h; float16 and bfloat16 through
// cublasGemmEx with fp32 accumulation), numpy semantics (ops/dense/matmul.h):
//   gemm            B has no batch (or only 1s): A [batch..., M, K] is one [batch*M, K] matrix
//   strided batched A and B have the same batch dims, or A has none: one batched call
//                   (A's stride 0 repeats it)
//   gemm per batch  any other broadcast: one call per output batch, at offsets fixed at plan time
#include <climits>
#include <utility>

#include "backends/cuda/dense/blas.h"
#include "backends/cuda/backend/cuda_kernels.h"
#include "ops/dense/matmul.h"

namespace dnnx::cuda {

namespace {

enum class MatMulPath { Gemm, StridedBatched, GemmPerBatch };

class MatMulKernel final : public Kernel {
 public:
  // offsets: GemmPerBatch only, one pair per output batch.
  MatMulKernel(const CudaContext& ctx, MatMulPath path, GemmCall call, int64_t y_elems,
               std::vector<std::pair<int64_t, int64_t>> offsets)
      : ctx_(ctx), path_(path), call_(call), y_elems_(y_elems), offsets_(std::move(offsets)) {}

  void run(const KernelArgs& args) const override {
    const auto* a = args.in<uint8_t>(0);
    const auto* b = args.in<uint8_t>(1);
    auto* y = args.out<uint8_t>(0);
    const size_t elem = dtype_size(call_.dtype);
    if (y_elems_ == 0) return;
    if (call_.k == 0) {  // an empty sum: zeros
      check(cudaMemsetAsync(y, 0, static_cast<size_t>(y_elems_) * elem, ctx_.stream), "cudaMemsetAsync");
      return;
    }
    if (path_ != MatMulPath::GemmPerBatch) {
      row_major_gemm(ctx_, call_, a, b, y);
      return;
    }
    const int64_t y_step = int64_t{call_.m} * call_.n;
    for (size_t i = 0; i < offsets_.size(); ++i) {
      row_major_gemm(ctx_, call_, a + offsets_[i].first * elem, b + offsets_[i].second * elem,
                     y + static_cast<int64_t>(i) * y_step * elem);
    }
  }

 private:
  const CudaContext& ctx_;
  MatMulPath path_;
  GemmCall call_;
  int64_t y_elems_;
  std::vector<std::pair<int64_t, int64_t>> offsets_;
};

KernelChoice matmul_factory(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs) {
  const MatMulGeometry g = matmul_geometry(node, inputs[0].info.shape, inputs[1].info.shape);
  const int64_t batches = numel(g.batch);
  MatMulPath path = MatMulPath::GemmPerBatch;
  if (numel(g.batch_b) == 1) {
    path = MatMulPath::Gemm;
  } else if (g.batch_a == g.batch_b || numel(g.batch_a) == 1) {
    path = MatMulPath::StridedBatched;
  }
  const int64_t rows = path == MatMulPath::Gemm ? batches * g.m : g.m;
  if (rows > INT_MAX || g.k > INT_MAX || g.n > INT_MAX || batches > INT_MAX) {
    node_fail<UnsupportedModelError>(node, "matrix dims M=" + std::to_string(rows) + ", K=" + std::to_string(g.k) +
                                               ", N=" + std::to_string(g.n) + " exceed cuBLAS's 2^31-1");
  }
  GemmCall call;
  call.m = static_cast<int>(rows);
  call.k = static_cast<int>(g.k);
  call.n = static_cast<int>(g.n);
  call.dtype = inputs[0].info.dtype;
  KernelChoice choice;
  choice.math = blas_math_name(ctx, call.dtype);
  std::vector<std::pair<int64_t, int64_t>> offsets;
  switch (path) {
    case MatMulPath::Gemm: choice.algorithm = call.half() ? "cublasGemmEx" : "cublasSgemm"; break;
    case MatMulPath::StridedBatched:
      choice.algorithm = call.half() ? "cublasGemmStridedBatchedEx" : "cublasSgemmStridedBatched";
      call.batch = static_cast<int>(batches);
      call.stride_a = numel(g.batch_a) == 1 ? 0 : g.m * g.k;
      call.stride_b = g.k * g.n;
      call.stride_y = g.m * g.n;
      choice.rejected.push_back({"cublasSgemm", "B has batch dims " + shape_str(g.batch_b) +
                                                    ", so the batch cannot fold into M"});
      break;
    case MatMulPath::GemmPerBatch:
      choice.algorithm = "cublasSgemm per batch";
      offsets = matmul_batch_offsets(g);
      choice.rejected.push_back({"cublasSgemmStridedBatched", "batch dims " + shape_str(g.batch_a) + " and " +
                                                                  shape_str(g.batch_b) + " broadcast unevenly"});
      break;
  }
  choice.kernel = std::make_unique<MatMulKernel>(ctx, path, call, numel(g.out), std::move(offsets));
  return choice;
}

}  // namespace

void register_cuda_matmul_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("MatMul", [&ctx](const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>&) { return matmul_factory(ctx, node, inputs); })
      .with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
