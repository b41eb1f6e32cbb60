// The CPU's training ops (runtime/training.h): the host loss and SGD of engine/train, and the CPU
// gradient kernels. Every pointer is host memory; each op has finished when it returns.
#include <cmath>
#include <cstring>

#include "backends/cpu/cpu_backend.h"
#include "runtime/kernel_registry.h"
#include "train/loss.h"
#include "train/sgd.h"

namespace dnnx {

namespace {

// The CPU's ParamUpdate: the parameters one after the other, in slot order.
class CpuParamUpdate final : public ParamUpdate {
 public:
  CpuParamUpdate(const SgdOptions& options, std::vector<ParamSlot> params) : options_(options), params_(std::move(params)) {}

  void check_finite(const float* /*lr*/, StepStats* stats) const override {
    for (size_t i = 0; i < params_.size() && stats->non_finite == 0; ++i) {
      const ParamSlot& p = params_[i];
      for (int64_t j = 0; j < p.n; ++j) {
        if (!std::isfinite(p.grad[j])) {
          stats->non_finite = kFirstGradientCode + static_cast<int32_t>(i);
          break;
        }
      }
    }
  }

  void sgd(const float* lr, const StepStats* stats, StepStats* report) const override {
    if (stats->non_finite == 0) {
      for (const ParamSlot& p : params_) sgd_update(options_, *lr, p.w, p.grad, p.velocity, p.n);
    }
    if (report) *report = *stats;
  }

 private:
  SgdOptions options_;
  std::vector<ParamSlot> params_;
};

class CpuTrainingOps final : public TrainingOps {
 public:

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

  std::unique_ptr<ParamUpdate> plan_update(const SgdOptions& options,
                                           const std::vector<ParamSlot>& params) const override {
    return std::make_unique<CpuParamUpdate>(options, params);
  }

  void accumulate(float* dst, const float* src, int64_t n) const override {
    for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
  }

  void copy_to_pinned(void* host, const void* src, size_t bytes) const override {
    if (bytes != 0) std::memcpy(host, src, bytes);
  }
};

}  // namespace

std::unique_ptr<TrainingOps> CpuBackend::training_ops() const { return std::make_unique<CpuTrainingOps>(); }

}  // namespace dnnx
