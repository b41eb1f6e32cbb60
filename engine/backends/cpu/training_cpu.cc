// The CPU's training ops (core/training.h): the host loss and SGD of engine/train, and the CPU
// gradient kernels. Every pointer is host memory; each op has finished when it returns.
#include <cmath>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/cpu_grad_kernels.h"
#include "train/loss.h"
#include "train/sgd.h"

namespace dnnx {

namespace {

class CpuTrainingOps final : public TrainingOps {
 public:
  void register_grad_kernels(GradRegistry& registry) const override { register_cpu_grad_kernels(registry); }

  void loss(const LossCall& call, StepStats* stats) const override {
    const LossValue v = call.kind == LossKind::CrossEntropy
                            ? cross_entropy(call.scores, call.y, call.n, call.c,
                                            static_cast<const int64_t*>(call.target), call.d_y)
                            : mean_squared_error(call.y, static_cast<const float*>(call.target), call.n, call.c,
                                                 call.d_y);
    *stats = StepStats{};
    stats->loss = v.loss;
    stats->correct = v.correct;
    stats->non_finite = std::isfinite(v.loss) ? 0 : kLossNotFinite;
  }

  void check_finite(const float* x, int64_t n, int32_t code, StepStats* stats) const override {
    if (stats->non_finite != 0) return;
    for (int64_t i = 0; i < n; ++i) {
      if (!std::isfinite(x[i])) {
        stats->non_finite = code;
        return;
      }
    }
  }

  void sgd_update(const SgdOptions& options, const float* lr, float* w, const float* grad, float* velocity,
                  int64_t n, const StepStats* stats) const override {
    if (stats->non_finite == 0) dnnx::sgd_update(options, *lr, w, grad, velocity, n);
  }

  void accumulate(float* dst, const float* src, int64_t n) const override {
    for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
  }
};

}  // namespace

std::unique_ptr<TrainingOps> CpuBackend::training_ops() const { return std::make_unique<CpuTrainingOps>(); }

}  // namespace dnnx
