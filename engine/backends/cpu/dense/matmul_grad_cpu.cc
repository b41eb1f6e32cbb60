// MatMul's gradient on OpenBLAS, per output batch i (A_i [M,K], B_i [K,N], dY_i [M,N]; the
// matrices' offsets from matmul_batch_offsets, shared with the forward):
//   dA_i += dY_i B_i^T    dB_i += A_i^T dY_i
// A side whose batch dim was broadcast receives the sum over the batches that read it, which
// the accumulating sgemm (beta 1, after zeroing) does for free. 1-D operands are [1,K] / [K,1]
// matrices with the same memory, so they need no special case.
#include <algorithm>

#include "backends/cpu/dense/blas.h"
#include "runtime/kernel_registry.h"
#include "ops/dense/matmul.h"

namespace dnnx {

namespace {

class MatMulGradKernel final : public GradKernel {
 public:
  explicit MatMulGradKernel(const MatMulGeometry& g)
      : g_(g), offsets_(matmul_batch_offsets(g)), size_a_(numel(g.batch_a) * g.m * g.k),
        size_b_(numel(g.batch_b) * g.k * g.n) {}

  void run(const GradArgs& args) const override {
    const float* a = args.in(0);
    const float* b = args.in(1);
    const float* dy = args.d_outputs[0];
    float* da = args.d_inputs[0];
    float* db = args.d_inputs[1];
    if (da) std::fill(da, da + size_a_, 0.0f);
    if (db) std::fill(db, db + size_b_, 0.0f);
    if (g_.m == 0 || g_.n == 0 || g_.k == 0) return;
    const int m = static_cast<int>(g_.m), k = static_cast<int>(g_.k), n = static_cast<int>(g_.n);
    for (size_t i = 0; i < offsets_.size(); ++i) {
      const float* dy_i = dy + static_cast<int64_t>(i) * g_.m * g_.n;
      const int64_t off_a = offsets_[i].first, off_b = offsets_[i].second;
      // dA_i [M,K] += dY_i [M,N] x B_i^T [N,K]
      if (da) sgemm(false, true, m, k, n, 1.0f, dy_i, n, b + off_b, n, 1.0f, da + off_a, k);
      // dB_i [K,N] += A_i^T [K,M] x dY_i [M,N]
      if (db) sgemm(true, false, k, n, m, 1.0f, a + off_a, k, dy_i, n, 1.0f, db + off_b, n);
    }
  }

 private:
  MatMulGeometry g_;
  std::vector<std::pair<int64_t, int64_t>> offsets_;
  int64_t size_a_, size_b_;
};

GradChoice plan_matmul_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "sgemm";
  choice.kernel = std::make_unique<MatMulGradKernel>(
      matmul_geometry(r.node, r.inputs[0].info.shape, r.inputs[1].info.shape));
  return choice;
}

}  // namespace

void register_cpu_matmul_grad_kernels(KernelRegistry& r) { r.at("MatMul").with_gradient(plan_matmul_grad); }

}  // namespace dnnx
