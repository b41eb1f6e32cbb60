// MatMul's gradient on cuBLAS, mirroring backends/cpu/dense/matmul_grad_cpu.cc. Per output batch i
// (A_i [M,K], B_i [K,N], dY_i [M,N]; the matrices' offsets from matmul_batch_offsets):
//   dA_i = sum over the batches that read A_i of dY_i B_i^T
//   dB_i = sum over the batches that read B_i of A_i^T dY_i
// Three shapes of the offsets, chosen at plan time:
//   the side is not broadcast (its stride is one matrix): one strided-batched SGEMM, beta 0;
//   dB of a B shared by every batch while A is not broadcast (a weight, the common case):
//     dB = A_all^T dY_all, one SGEMM with K = batches * M (A and dY are [batches*M, *] already);
//   anything else: zero the gradient, then one SGEMM per batch with beta 1 (in stream order,
//     so the sum's order is fixed and the result deterministic).
// 1-D operands are [1,K] / [K,1] matrices with the same memory, so they need no special case.
#include "backends/cuda/dense/blas.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/runtime/tensor_desc.h"
#include "ops/dense/matmul.h"

namespace dnnx::cuda {

namespace {

enum class Shape3 { Batched, Folded, Loop };

// The constant stride between consecutive batches' matrices, or -1 when there is none.
int64_t uniform_stride(const std::vector<std::pair<int64_t, int64_t>>& offsets, bool first, int64_t matrix) {
  if (offsets.size() <= 1) return matrix;
  const int64_t stride = first ? offsets[1].first : offsets[1].second;
  if (stride != 0 && stride != matrix) return -1;
  for (size_t i = 0; i < offsets.size(); ++i) {
    if ((first ? offsets[i].first : offsets[i].second) != static_cast<int64_t>(i) * stride) return -1;
  }
  return stride;
}

class MatMulGradKernel final : public GradKernel {
 public:
  MatMulGradKernel(const CudaContext& ctx, const MatMulGeometry& g)
      : ctx_(ctx), g_(g), offsets_(matmul_batch_offsets(g)), size_a_(numel(g.batch_a) * g.m * g.k),
        size_b_(numel(g.batch_b) * g.k * g.n) {
    const int64_t sa = uniform_stride(offsets_, true, g.m * g.k);
    const int64_t sb = uniform_stride(offsets_, false, g.k * g.n);
    const int batches = static_cast<int>(offsets_.size());
    const int m = static_cast<int>(g.m), k = static_cast<int>(g.k), n = static_cast<int>(g.n);
    // dA_i [M,K] = dY_i [M,N] x B_i^T [N,K]
    da_.trans_b = true;
    da_.m = m;
    da_.n = k;
    da_.k = n;
    // dB_i [K,N] = A_i^T [K,M] x dY_i [M,N]
    db_.trans_a = true;
    db_.m = k;
    db_.n = n;
    db_.k = m;
    if (sa > 0 && sb >= 0) {
      da_shape_ = Shape3::Batched;
      da_.batch = batches;
      da_.stride_a = g.m * g.n;
      da_.stride_b = sb;
      da_.stride_y = sa;
    }
    if (sb > 0 && sa >= 0) {
      db_shape_ = Shape3::Batched;
      db_.batch = batches;
      db_.stride_a = sa;
      db_.stride_b = g.m * g.n;
      db_.stride_y = sb;
    } else if (sb == 0 && sa > 0) {
      db_shape_ = Shape3::Folded;
      db_.k = m * batches;
    }
  }

  void run(const GradArgs& args) const override {
    const float* a = args.in(0);
    const float* b = args.in(1);
    const float* dy = args.d_outputs[0];
    float* da = args.d_inputs[0];
    float* db = args.d_inputs[1];
    const bool empty = g_.m == 0 || g_.n == 0 || g_.k == 0 || offsets_.empty();
    const int64_t dy_matrix = g_.m * g_.n;
    if (da) {
      grad(da_shape_, da_, size_a_, empty, da, dy, b, [&](size_t i, const float*& x, const float*& w, float*& out) {
        x = dy + static_cast<int64_t>(i) * dy_matrix;
        w = b + offsets_[i].second;
        out = da + offsets_[i].first;
      });
    }
    if (db) {
      grad(db_shape_, db_, size_b_, empty, db, a, dy, [&](size_t i, const float*& x, const float*& w, float*& out) {
        x = a + offsets_[i].first;
        w = dy + static_cast<int64_t>(i) * dy_matrix;
        out = db + offsets_[i].second;
      });
    }
  }

 private:
  // One side's gradient: `first`, `second` are the whole operands (batched and folded shapes);
  // `batch_operands(i, first_i, second_i, out_i)` gives batch i's (the loop).
  template <class BatchOperands>
  void grad(Shape3 shape, const GemmCall& call, int64_t size, bool empty, float* out, const float* first,
            const float* second, BatchOperands batch_operands) const {
    if (empty || shape == Shape3::Loop) {
      check(cudaMemsetAsync(out, 0, static_cast<size_t>(size) * sizeof(float), ctx_.stream), "cudaMemsetAsync");
      if (empty) return;
    }
    if (shape != Shape3::Loop) {
      row_major_gemm(ctx_, call, first, second, out);
      return;
    }
    GemmCall one = call;
    one.batch = 1;
    one.beta = 1.0f;
    for (size_t i = 0; i < offsets_.size(); ++i) {
      const float* x = nullptr;
      const float* w = nullptr;
      float* y = nullptr;
      batch_operands(i, x, w, y);
      row_major_gemm(ctx_, one, x, w, y);
    }
  }

  const CudaContext& ctx_;
  MatMulGeometry g_;
  std::vector<std::pair<int64_t, int64_t>> offsets_;
  int64_t size_a_, size_b_;
  GemmCall da_, db_;
  Shape3 da_shape_ = Shape3::Loop, db_shape_ = Shape3::Loop;
};

GradChoice plan_matmul_grad(const GradRequest& r) {
  const Shape& a = r.inputs[0].info.shape;
  const Shape& b = r.inputs[1].info.shape;
  if (!fits_int(a) || !fits_int(b) || !fits_int(r.outputs[0].shape)) {
    node_fail<UnsupportedModelError>(r.node, "an operand has more than 2^31-1 elements");
  }
  GradChoice choice;
  choice.algorithm = "cublasSgemm";
  choice.kernel = std::make_unique<MatMulGradKernel>(cuda_context_of(r), matmul_geometry(r.node, a, b));
  return choice;
}

}  // namespace

void register_cuda_matmul_grad_kernels(KernelRegistry& r, const CudaContext&) { r.at("MatMul").with_gradient(plan_matmul_grad); }

}  // namespace dnnx::cuda
