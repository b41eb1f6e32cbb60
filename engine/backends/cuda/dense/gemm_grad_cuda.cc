// Gemm's gradient on cuBLAS, mirroring backends/cpu/dense/gemm_grad_cpu.cc. Forward: Y [M,N] =
// alpha * op(A) op(B) + beta * C, op(A) [M,K], op(B) [K,N], C broadcast to [M,N]. With dY [M,N]:
//   d op(A) = alpha * dY op(B)^T   [M,K]   (dA is its transpose when transA)
//   d op(B) = alpha * op(A)^T dY   [K,N]   (dB is its transpose when transB)
//   dC      = beta * dY summed over the dims C broadcasts along (launch_broadcast_sum)
// Each product is one row-major cublasLtMatmul (lt_matmul.h) whose transpose flags absorb
// transA/transB, so nothing is copied; beta 0, so dA and dB are overwritten. Its algorithm is
// chosen as the forward's is (Note [GEMM candidates] in lt_search.h: timed with
// algo_search="exhaustive"), and only the products a needed gradient reads are planned. Each
// cuBLASLt algorithm gives bit-identical results run to run (no atomics), so this kernel is
// deterministic as it stands. Where cuBLASLt has no algorithm, cublasSgemm runs the product.
// Note [bias gradient epilogue]: a row-vector C's gradient (alpha and beta 1) is the column sum
// of dY, which dB's product reads anyway: cuBLASLt's BGRADA/BGRADB epilogue (the operand that
// is dY, reduced over the GEMM's k, the batch) writes it in the same call, in place of
// launch_broadcast_sum's kernel. Where cuBLASLt offers no algorithm with that epilogue, or dB is
// not needed, the sum kernel runs as before.
// Gemm+Relu (fuse_gemm_relu, which the trainer runs on its tail too) first masks dY with the
// Relu's derivative from its output (launch_relu_mask, into the workspace), summing a row-vector
// C's gradient in the same pass, then runs Gemm's gradient on the masked dZ.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "backends/cuda/dense/blas.h"
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/dense/dense_grad_kernels.h"
#include "backends/cuda/dense/lt_matmul.h"
#include "backends/cuda/runtime/tensor_desc.h"

namespace dnnx::cuda {

namespace {

enum GemmInput : size_t { kA = 0, kB = 1, kC = 2 };

// One product of the backward: y = op(first) op(second), where first/second name the operands.
enum class Operand { A, B, DY };
struct GradProduct {
  GemmCall call;
  Operand first = Operand::DY, second = Operand::DY;
  std::shared_ptr<LtMatmul> lt;  // null: cublasSgemm (or not needed)
};

struct GemmGradPlan {
  GradProduct da, db;
  bool has_c = false;
  bool c_in_db = false;  // Note [bias gradient epilogue]: dB's cuBLASLt call writes dC
  int64_t rows = 0, cols = 0, c_rows = 1, c_cols = 1;  // Y [rows, cols]; C right-aligned to [c_rows, c_cols]
  float beta = 1.0f;
  bool empty = false;  // M, N or K is 0: cuBLAS is not called
};

GradProduct product(bool ta, bool tb, int m, int n, int k, float alpha, Operand first, Operand second) {
  GradProduct p;
  p.call.trans_a = ta;
  p.call.trans_b = tb;
  p.call.m = m;
  p.call.n = n;
  p.call.k = k;
  p.call.alpha = alpha;
  p.call.beta = 0.0f;
  p.first = first;
  p.second = second;
  return p;
}

class GemmGradKernel final : public GradKernel {
 public:
  GemmGradKernel(const CudaContext& ctx, GemmGradPlan p) : ctx_(ctx), p_(p) {}

  void run(const GradArgs& args) const override {
    const float* ops[] = {args.in(kA), args.in(kB), args.d_outputs[0]};
    auto operand = [&](Operand o) { return ops[static_cast<int>(o)]; };
    if (!p_.empty) {
      auto multiply = [&](const GradProduct& p, float* out, float* bias_grad) {
        if (p.lt) {
          p.lt->run(ctx_, p.call, operand(p.first), operand(p.second), bias_grad, out, args.workspace);
        } else {
          row_major_gemm(ctx_, p.call, operand(p.first), operand(p.second), out);
        }
      };
      if (args.d_inputs[kA]) multiply(p_.da, args.d_inputs[kA], nullptr);
      if (args.d_inputs[kB]) multiply(p_.db, args.d_inputs[kB], p_.c_in_db ? args.d_inputs[kC] : nullptr);
    }
    const bool c_done = p_.c_in_db && args.d_inputs[kB] && !p_.empty;
    if (p_.has_c && args.d_inputs[kC] && !c_done) {
      launch_broadcast_sum(args.d_outputs[0], args.d_inputs[kC], p_.rows, p_.cols, p_.c_rows, p_.c_cols, p_.beta,
                           ctx_.stream);
    }
  }

 private:
  const CudaContext& ctx_;
  GemmGradPlan p_;
};

// `c_in_db` (or null) tells whether dB's call also writes dC (Note [bias gradient epilogue]).
GradChoice plan_gemm_grad(const GradRequest& r, bool* c_in_db = nullptr) {
  const bool ta = r.node.attr_int("transA", 0) != 0;
  const bool tb = r.node.attr_int("transB", 0) != 0;
  const float alpha = r.node.attr_float("alpha", 1.0f);
  const Shape& a = r.inputs[kA].info.shape;
  const Shape& y = r.outputs[0].shape;
  if (!fits_int(a) || !fits_int(r.inputs[kB].info.shape) || !fits_int(y)) {
    node_fail<UnsupportedModelError>(r.node, "an operand has more than 2^31-1 elements");
  }
  const int m = static_cast<int>(y[0]), n = static_cast<int>(y[1]);
  const int k = static_cast<int>(ta ? a[0] : a[1]);
  GemmGradPlan p;
  p.empty = m == 0 || n == 0 || k == 0;
  // The CPU's sgemm calls, one for one (gemm_grad_cpu.cc).
  p.da = !ta ? product(false, !tb, m, k, n, alpha, Operand::DY, Operand::B)
             : product(tb, true, k, m, n, alpha, Operand::B, Operand::DY);
  p.db = !tb ? product(!ta, false, k, n, m, alpha, Operand::A, Operand::DY)
             : product(true, ta, n, k, m, alpha, Operand::DY, Operand::A);
  p.has_c = r.inputs.size() > kC && r.inputs[kC].present;
  if (p.has_c) {
    const Shape& c = r.inputs[kC].info.shape;
    p.rows = m;
    p.cols = n;
    p.c_rows = c.size() == 2 ? c[0] : 1;
    p.c_cols = c.empty() ? 1 : c.back();
    p.beta = r.node.attr_float("beta", 1.0f);
  }
  GradChoice choice;
  const CudaContext& ctx = cuda_context_of(r);
  const size_t limit = std::min(kLtWorkspaceLimit, ctx.options.workspace_limit);
  std::string names;
  auto plan_product = [&](GradProduct& product, bool needed, const char* what, cublasLtEpilogue_t bias_grad) {
    if (!needed || p.empty) return;
    auto lt = std::make_shared<LtMatmul>();
    std::string name = "cublasSgemm";
    bool planned = false;
    if (bias_grad != CUBLASLT_EPILOGUE_DEFAULT) {  // Note [bias gradient epilogue]
      p.c_in_db = lt->plan(ctx, product.call, bias_grad, limit);
      planned = p.c_in_db;
      if (!planned) lt = std::make_shared<LtMatmul>();
    }
    if (planned || lt->plan(ctx, product.call, CUBLASLT_EPILOGUE_DEFAULT, limit)) {
      choice.workspace_bytes = std::max(choice.workspace_bytes, lt->workspace_bytes());
      name = "cublasLtMatmul" + std::string(planned ? " (bias gradient epilogue)" : "") + lt->choice_text();
      for (const Rejected& rej : lt->choice().rejected) choice.rejected.push_back({what + (" " + rej.algorithm), rej.reason});
      product.lt = std::move(lt);
    }
    names += (names.empty() ? "" : ", ") + (what + (" " + name));
  };
  // dC in dB's call: C a row vector of N, alpha and beta 1, its gradient wanted. dY is cuBLASLt's
  // A in dB's call without transB (reduced to D's rows, N of them), its B with transB (D's columns).
  const bool row_c = p.has_c && p.c_rows == 1 && p.c_cols == n && p.beta == 1.0f && alpha == 1.0f &&
                     r.inputs[kC].info.shape.size() <= 2 && r.needs_grad.size() > kC && r.needs_grad[kC];
  const cublasLtEpilogue_t bias_grad =
      !row_c ? CUBLASLT_EPILOGUE_DEFAULT : (tb ? CUBLASLT_EPILOGUE_BGRADB : CUBLASLT_EPILOGUE_BGRADA);
  plan_product(p.da, r.needs_grad[kA], "dA", CUBLASLT_EPILOGUE_DEFAULT);
  plan_product(p.db, r.needs_grad[kB], "dB", bias_grad);
  choice.algorithm = names.empty() ? "cublasLtMatmul" : names;
  if (c_in_db) *c_in_db = p.c_in_db;
  choice.kernel = std::make_unique<GemmGradKernel>(ctx, p);
  return choice;
}

// The mask's column sums serve a row-vector C of a Gemm of up to this many rows (one block
// column walks all of them); beyond, Gemm's own gradient sums C's from dZ.
constexpr int64_t kMaskSumRows = 8192;

class GemmReluGradKernel final : public GradKernel {
 public:
  GemmReluGradKernel(const CudaContext& ctx, std::unique_ptr<GradKernel> gemm, int64_t rows, int64_t cols,
                     bool sum_c, float beta)
      : ctx_(ctx), gemm_(std::move(gemm)), rows_(rows), cols_(cols), sum_c_(sum_c), beta_(beta) {}

  void run(const GradArgs& args) const override {
    auto* dz = static_cast<float*>(args.workspace);
    void* rest = static_cast<uint8_t*>(args.workspace) + dz_bytes(rows_, cols_);
    float* dc = sum_c_ ? args.d_inputs[kC] : nullptr;
    launch_relu_mask(args.d_outputs[0], args.out(0), dz, rows_, cols_, dc, beta_, ctx_.stream);
    float* d_in[] = {args.d_inputs[kA], args.d_inputs[kB], sum_c_ ? nullptr : args.d_inputs[kC]};
    const float* d_out = dz;
    gemm_->run(GradArgs{args.inputs, args.outputs, &d_out, d_in, rest, args.kept});
  }

  static size_t dz_bytes(int64_t rows, int64_t cols) {
    return (static_cast<size_t>(rows * cols) * sizeof(float) + 255) / 256 * 256;
  }

 private:
  const CudaContext& ctx_;
  std::unique_ptr<GradKernel> gemm_;
  int64_t rows_, cols_;
  bool sum_c_;
  float beta_;
};

GradChoice plan_gemm_relu_grad(const GradRequest& r) {
  bool c_in_db = false;
  GradChoice gemm = plan_gemm_grad(r, &c_in_db);
  const int64_t rows = r.outputs[0].shape[0], cols = r.outputs[0].shape[1];
  const bool has_c = r.inputs.size() > kC && r.inputs[kC].present;
  const Shape& c = has_c ? r.inputs[kC].info.shape : Shape{};
  // Where dB's cuBLASLt call writes dC from the masked dZ, the mask sums nothing (and spreads
  // over row blocks: launch_relu_mask).
  const bool sum_c = !c_in_db && has_c && !c.empty() && (c.size() == 1 || c[0] == 1) && c.back() == cols &&
                     rows <= kMaskSumRows;
  GradChoice choice;
  choice.algorithm = std::string("relu mask") + (sum_c ? " with the bias's sum" : "") + ", then " + gemm.algorithm;
  choice.workspace_bytes = GemmReluGradKernel::dz_bytes(rows, cols) + gemm.workspace_bytes;
  choice.kernel = std::make_unique<GemmReluGradKernel>(cuda_context_of(r), std::move(gemm.kernel), rows, cols, sum_c,
                                                       r.node.attr_float("beta", 1.0f));
  return choice;
}

}  // namespace

void register_cuda_gemm_grad_kernels(KernelRegistry& r, const CudaContext&) {
  r.at("Gemm").with_gradient([](const GradRequest& req) { return plan_gemm_grad(req); });
  r.at("Gemm+Relu").with_gradient(plan_gemm_relu_grad);
}

}  // namespace dnnx::cuda
