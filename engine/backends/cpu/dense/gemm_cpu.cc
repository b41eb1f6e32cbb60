// Gemm on sgemm (the AVX-512 kernel of gemm_avx512.h where it applies, chosen at plan time;
// OpenBLAS otherwise): Y is first filled with beta * C (broadcast), then sgemm accumulates into it.
// "Gemm+Relu" (made by the fuse_gemm_relu pass) applies the Relu to Y right after.
#include "backends/cpu/elementwise/activation_cpu.h"
#include "backends/cpu/conv/conv_nhwc_cpu.h"
#include "backends/cpu/dense/blas.h"
#include "backends/cpu/dense/gemm_avx512.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct GemmShape {
  int m, n, k;
  bool trans_a, trans_b;
  float alpha, beta;
  Shape c_shape;  // empty when C is absent
  bool has_c;
  bool relu = false;
};

class GemmKernel final : public Kernel {
 public:
  explicit GemmKernel(GemmShape s) : s_(std::move(s)), avx512_(sgemm_avx512_applies(s_.m, s_.n, s_.k)) {}

  void run(const KernelArgs& args) const override {
    float* y = args.out(0);
    float beta = 0.0f;
    if (s_.has_c && s_.beta != 0.0f) {
      fill_with_c(args.in(2), y);
      beta = 1.0f;
    }
    const int lda = s_.trans_a ? s_.m : s_.k;
    const int ldb = s_.trans_b ? s_.k : s_.n;
    if (avx512_) {
      sgemm_avx512(s_.trans_a, s_.trans_b, s_.m, s_.n, s_.k, s_.alpha, args.in(0), lda, args.in(1), ldb, beta, y,
                   s_.n);
    } else {
      sgemm(s_.trans_a, s_.trans_b, s_.m, s_.n, s_.k, s_.alpha, args.in(0), lda, args.in(1), ldb, beta, y, s_.n);
    }
    if (s_.relu) relu_inplace(y, static_cast<int64_t>(s_.m) * s_.n);
  }

 private:
  // y[i,j] = beta * C[i or 0, j or 0]: C is [], [N], [1,N], [M,1], [M,N] or [1,1].
  void fill_with_c(const float* c, float* y) const {
    const int64_t rank = static_cast<int64_t>(s_.c_shape.size());
    const int64_t c_rows = rank == 2 ? s_.c_shape[0] : 1;
    const int64_t c_cols = rank >= 1 ? s_.c_shape[rank - 1] : 1;
    for (int64_t i = 0; i < s_.m; ++i) {
      const float* c_row = c + (c_rows == 1 ? 0 : i * c_cols);
      float* y_row = y + i * s_.n;
      if (c_cols == 1) {
        for (int64_t j = 0; j < s_.n; ++j) y_row[j] = s_.beta * c_row[0];
      } else {
        for (int64_t j = 0; j < s_.n; ++j) y_row[j] = s_.beta * c_row[j];
      }
    }
  }

  GemmShape s_;
  bool avx512_;  // sgemm_avx512 takes this product
};

KernelChoice make_gemm(const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>& outputs) {
  GemmShape s;
  s.relu = node.op_type == "Gemm+Relu";
  s.trans_a = node.attr_int("transA", 0) != 0;
  s.trans_b = node.attr_int("transB", 0) != 0;
  s.alpha = node.attr_float("alpha", 1.0f);
  s.beta = node.attr_float("beta", 1.0f);
  s.m = static_cast<int>(outputs[0].shape[0]);
  s.n = static_cast<int>(outputs[0].shape[1]);
  s.k = static_cast<int>(s.trans_a ? inputs[0].info.shape[0] : inputs[0].info.shape[1]);
  s.has_c = inputs.size() > 2 && inputs[2].present;
  if (s.has_c) s.c_shape = inputs[2].info.shape;
  KernelChoice choice;
  // Note [packed product] (conv/conv_nhwc_cpu.cc): a constant B, y = A B (+ C [N]) on the packed tiles
  const bool bias_only = !s.has_c || (s.beta == 1.0f && numel(s.c_shape) == s.n && s.c_shape.back() == s.n);
  if (!s.trans_a && s.alpha == 1.0f && bias_only &&
      choose_packed_product(choice, s.m, s.k, s.n, inputs[1], s.trans_b, s.has_c, s.relu, "sgemm")) {
    return choice;
  }
  choice.kernel = std::make_unique<GemmKernel>(std::move(s));
  choice.algorithm = "sgemm";
  return choice;
}

}  // namespace

void register_cpu_gemm_kernels(KernelRegistry& r) {
  r.add("Gemm", make_gemm);
  r.add("Gemm+Relu", make_gemm);
}

}  // namespace dnnx
