// MatMul on the CPU through sgemm, per batch (the AVX-512 kernel of gemm_avx512.h where it
// applies, chosen at plan time; OpenBLAS otherwise):
//   gemm          B has no batch (or only 1s): A [batch..., M, K] is one contiguous
//                 [batch*M, K] matrix, so the whole product is one GEMM
//   batched gemm  one GEMM per output batch, each operand's offset taken through its broadcast
//                 batch strides (computed at plan time)
#include <climits>
#include <cstring>
#include <utility>
#include <vector>

#include "backends/cpu/conv/conv_nhwc_cpu.h"
#include "backends/cpu/dense/blas.h"
#include "backends/cpu/dense/gemm_avx512.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "runtime/kernel_registry.h"
#include "ops/dense/matmul.h"

namespace dnnx {

namespace {

// Note [batches across the pool]: a batched MatMul of at least as many batches as threads (the
// attention products of MobileViT and ViT: [256 x 36] x [36 x 256] per head and patch) runs its
// batches across the pool, each product on one thread, where each product split its 32-column
// panels across the threads and joined them, once a batch: MobileViT-XXS's attention products
// took 3.2 ms at 2 threads against 2.4 at 1. Each product inside a pool job runs on its caller
// (blas.cc, gemm_avx512.cc), and its sums do not depend on the split: the same bits.
enum class MatMulPath { Gemm, BatchedGemm };

void sgemm_default_blocks(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                          const float* b, int ldb, float beta, float* c, int ldc) {
  sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

class MatMulKernel final : public Kernel {
 public:
  // Gemm: rows = batch*M, no offsets. BatchedGemm: rows = M, one offset pair per output batch.
  MatMulKernel(MatMulPath path, int64_t rows, int64_t k, int64_t n,
               std::vector<std::pair<int64_t, int64_t>> offsets)
      : path_(path), rows_(rows), k_(k), n_(n), offsets_(std::move(offsets)),
        avx512_(sgemm_avx512_applies(static_cast<int>(rows), static_cast<int>(n), static_cast<int>(k))),
        batch_workers_(plan_workers(static_cast<int64_t>(offsets_.size()), rows * k * n)) {}

  void run(const KernelArgs& args) const override {
    const float* a = args.in(0);
    const float* b = args.in(1);
    float* y = args.out(0);
    const int64_t batches = path_ == MatMulPath::Gemm ? 1 : static_cast<int64_t>(offsets_.size());
    if (batches == 0 || rows_ == 0 || n_ == 0) return;
    if (k_ == 0) {  // an empty sum: zeros (sgemm is not asked to handle K = 0)
      std::memset(y, 0, static_cast<size_t>(batches * rows_ * n_) * sizeof(float));
      return;
    }
    const int m = static_cast<int>(rows_), k = static_cast<int>(k_), n = static_cast<int>(n_);
    const auto product = avx512_ ? sgemm_avx512 : sgemm_default_blocks;
    if (path_ == MatMulPath::Gemm) {
      product(false, false, m, n, k, 1.0f, a, k, b, n, 0.0f, y, n);
      return;
    }
    // Note [batches across the pool]
    const auto one = [&](int64_t i) {
      product(false, false, m, n, k, 1.0f, a + offsets_[i].first, k, b + offsets_[i].second, n, 0.0f,
              y + i * rows_ * n_, n);
    };
    if (batches < cpu_threads()) {
      for (int64_t i = 0; i < batches; ++i) one(i);
      return;
    }
    cpu_thread_pool().parallel_for(batches, [&](int64_t first, int64_t last, int) {
      for (int64_t i = first; i < last; ++i) one(i);
    }, batch_workers_);
  }

 private:
  MatMulPath path_;
  int64_t rows_, k_, n_;
  std::vector<std::pair<int64_t, int64_t>> offsets_;
  bool avx512_;  // sgemm_avx512 (gemm_avx512.h) takes this product
  int batch_workers_;  // Note [batches across the pool]
};

KernelChoice matmul_factory(const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>&) {
  const MatMulGeometry g = matmul_geometry(node, inputs[0].info.shape, inputs[1].info.shape);
  const int64_t batches = numel(g.batch);
  const MatMulPath path = numel(g.batch_b) == 1 ? MatMulPath::Gemm : MatMulPath::BatchedGemm;
  const int64_t rows = path == MatMulPath::Gemm ? batches * g.m : g.m;
  if (rows > INT_MAX || g.k > INT_MAX || g.n > INT_MAX) {
    node_fail<UnsupportedModelError>(node, "matrix dims M=" + std::to_string(rows) + ", K=" +
                                               std::to_string(g.k) + ", N=" + std::to_string(g.n) +
                                               " exceed the BLAS limit of 2^31-1");
  }
  KernelChoice choice;
  // Note [packed product] (conv/conv_nhwc_cpu.cc): a constant 2-D B on the packed tiles
  if (path == MatMulPath::Gemm && inputs[1].info.shape.size() == 2 &&
      choose_packed_product(choice, rows, g.k, g.n, inputs[1], false, false, false, "gemm")) {
    return choice;
  }
  if (path == MatMulPath::Gemm) {
    choice.algorithm = "gemm";
    choice.kernel = std::make_unique<MatMulKernel>(path, rows, g.k, g.n,
                                                   std::vector<std::pair<int64_t, int64_t>>{});
  } else {
    choice.algorithm = "batched gemm";
    choice.kernel = std::make_unique<MatMulKernel>(path, rows, g.k, g.n, matmul_batch_offsets(g));
    choice.rejected.push_back({"gemm", "B has batch dims " + shape_str(g.batch_b) +
                                           ", so the batch cannot fold into M"});
  }
  return choice;
}

}  // namespace

void register_cpu_matmul_kernels(KernelRegistry& r) { r.add("MatMul", matmul_factory); }

}  // namespace dnnx
