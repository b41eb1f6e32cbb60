// Gemm's gradient on OpenBLAS. Forward: Y [M,N] = alpha * op(A) op(B) + beta * C, op(A) [M,K],
// op(B) [K,N], C broadcast to [M,N]. Backward, with dY [M,N]:
//   d op(A) = alpha * dY op(B)^T   [M,K]   (dA is its transpose when transA)
//   d op(B) = alpha * op(A)^T dY   [K,N]   (dB is its transpose when transB)
//   dC      = beta * dY summed over the dims C broadcasts along
// Each product is one sgemm whose transpose flags absorb transA/transB, so nothing is copied.
// Gemm+Relu (the fuse_gemm_relu pass, which the trainer runs on its tail too) first masks dY
// with the Relu's derivative, read from its output (Y > 0), into the workspace: dZ, then Gemm's.
#include <algorithm>

#include "backends/cpu/dense/blas.h"
#include "backends/cpu/elementwise/broadcast_walk.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum GemmInput : size_t { kA = 0, kB = 1, kC = 2 };

struct GemmGradShape {
  int m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
  bool has_c = false;
  int64_t c_numel = 0;
  BroadcastWalk c_walk;  // C -> [M,N]
};

class GemmGradKernel final : public GradKernel {
 public:
  explicit GemmGradKernel(GemmGradShape s) : s_(std::move(s)) {}

  void run(const GradArgs& args) const override {
    const float* dy = args.d_outputs[0];
    if (args.d_inputs[kA]) grad_a(args.in(kB), dy, args.d_inputs[kA]);
    if (args.d_inputs[kB]) grad_b(args.in(kA), dy, args.d_inputs[kB]);
    if (s_.has_c && args.d_inputs[kC]) grad_c(dy, args.d_inputs[kC]);
  }

 private:
  // A is [M,K] (or [K,M] when transA); B is [K,N] (or [N,K] when transB).
  int lda() const { return s_.trans_a ? s_.m : s_.k; }
  int ldb() const { return s_.trans_b ? s_.k : s_.n; }

  void grad_a(const float* b, const float* dy, float* da) const {
    const int m = s_.m, n = s_.n, k = s_.k;
    if (!s_.trans_a) {
      // dA [M,K] = alpha * dY [M,N] op(B)^T; op(B)^T is B^T for B [K,N], B itself for B [N,K].
      sgemm(false, !s_.trans_b, m, k, n, s_.alpha, dy, n, b, ldb(), 0.0f, da, k);
    } else {
      // dA [K,M] = alpha * op(B) dY^T; op(B) is B for B [K,N], B^T for B [N,K].
      sgemm(s_.trans_b, true, k, m, n, s_.alpha, b, ldb(), dy, n, 0.0f, da, m);
    }
  }

  void grad_b(const float* a, const float* dy, float* db) const {
    const int m = s_.m, n = s_.n, k = s_.k;
    if (!s_.trans_b) {
      // dB [K,N] = alpha * op(A)^T dY; op(A)^T is A^T for A [M,K], A itself for A [K,M].
      sgemm(!s_.trans_a, false, k, n, m, s_.alpha, a, lda(), dy, n, 0.0f, db, n);
    } else {
      // dB [N,K] = alpha * dY^T op(A); op(A) is A for A [M,K], A^T for A [K,M].
      sgemm(true, s_.trans_a, n, k, m, s_.alpha, dy, n, a, lda(), 0.0f, db, k);
    }
  }

  // dC[j] = beta * sum of dY over every output element that read C[j].
  void grad_c(const float* dy, float* dc) const {
    const int64_t c_size = s_.c_numel;
    std::fill(dc, dc + c_size, 0.0f);
    for_each_run(s_.c_walk, [&](int64_t out, int64_t in, int64_t count, int64_t step) {
      for (int64_t i = 0; i < count; ++i) dc[in + i * step] += dy[out + i];
    });
    for (int64_t j = 0; j < c_size; ++j) dc[j] *= s_.beta;
  }

  GemmGradShape s_;
};

GradChoice plan_gemm_grad(const GradRequest& r) {
  GemmGradShape s;
  s.trans_a = r.node.attr_int("transA", 0) != 0;
  s.trans_b = r.node.attr_int("transB", 0) != 0;
  s.alpha = r.node.attr_float("alpha", 1.0f);
  s.beta = r.node.attr_float("beta", 1.0f);
  s.m = static_cast<int>(r.outputs[0].shape[0]);
  s.n = static_cast<int>(r.outputs[0].shape[1]);
  s.k = static_cast<int>(s.trans_a ? r.inputs[kA].info.shape[0] : r.inputs[kA].info.shape[1]);
  s.has_c = r.inputs.size() > kC && r.inputs[kC].present;
  if (s.has_c) {
    s.c_numel = numel(r.inputs[kC].info.shape);
    s.c_walk = broadcast_walk(r.inputs[kC].info.shape, r.outputs[0].shape);
  }
  GradChoice choice;
  choice.algorithm = "sgemm";
  choice.kernel = std::make_unique<GemmGradKernel>(std::move(s));
  return choice;
}

// dZ = dY where Y > 0, else 0 ([M,N], in the workspace), then Gemm's gradient with dZ.
class GemmReluGradKernel final : public GradKernel {
 public:
  GemmReluGradKernel(std::unique_ptr<GradKernel> gemm, int64_t count) : gemm_(std::move(gemm)), count_(count) {}

  void run(const GradArgs& args) const override {
    float* dz = static_cast<float*>(args.workspace);
    const float* dy = args.d_outputs[0];
    const float* y = args.out(0);
    for (int64_t i = 0; i < count_; ++i) dz[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    const float* d_out = dz;
    gemm_->run(GradArgs{args.inputs, args.outputs, &d_out, args.d_inputs, nullptr, args.kept});
  }

 private:
  std::unique_ptr<GradKernel> gemm_;
  int64_t count_;
};

GradChoice plan_gemm_relu_grad(const GradRequest& r) {
  GradChoice gemm = plan_gemm_grad(r);
  const int64_t count = numel(r.outputs[0].shape);
  GradChoice choice;
  choice.algorithm = "relu mask, then " + gemm.algorithm;
  choice.workspace_bytes = static_cast<size_t>(count) * sizeof(float);
  choice.kernel = std::make_unique<GemmReluGradKernel>(std::move(gemm.kernel), count);
  return choice;
}

}  // namespace

void register_cpu_gemm_grad_kernels(KernelRegistry& r) {
  r.at("Gemm").with_gradient(plan_gemm_grad);
  r.at("Gemm+Relu").with_gradient(plan_gemm_relu_grad);
}

}  // namespace dnnx
