// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss on the CPU (ops/loss/class_loss.h),
// forward and gradient side by side, over the score type T (float types) and the label type L.
//   forward   lp[n, c, d] = X (NLL) or log_softmax(X) along c (SCE, written to log_prob when
//             asked for); loss[n, d] = -w lp[n, label, d]; reduced as `reduction` says
//   gradient  g[n, d] = dY[n, d] (none), dY (sum) or dY / sum(w) (mean), 0 where ignored;
//             NLL  dX[n, c, d] = -w g[n, d] where c = label, else 0
//             SCE  dX[n, c, d] = w g[n, d] (softmax[n, c, d] - [c = label])
//                  + dlog_prob[n, c, d] - softmax[n, c, d] * sum_c' dlog_prob[n, c', d]
#include <cmath>
#include <type_traits>
#include <vector>

#include "backends/cpu/runtime/element_type.h"
#include "ops/loss/class_loss.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

constexpr size_t kScores = 0, kLabels = 1, kWeight = 2, kLogProb = 1;

// The label of sample (n, d), or -1 when it is ignored; InputError when it is out of range.
int64_t class_of(const ClassLossGeometry& g, const void* labels, int64_t at) {
  const int64_t label = g.label_type == DType::Int32 ? static_cast<const int32_t*>(labels)[at]
                                                     : static_cast<const int64_t*>(labels)[at];
  if (g.has_ignore_index && label == g.ignore_index) return -1;
  if (label < 0 || label >= g.c) {
    const std::string ignore =
        g.has_ignore_index ? " (and is not ignore_index " + std::to_string(g.ignore_index) + ")" : std::string();
    throw InputError(g.where + ": label " + std::to_string(label) + " is out of range for " + std::to_string(g.c) +
                     " classes" + ignore);
  }
  return label;
}

// log(sum_c e^x[n, c, d]) over the C scores of sample (n, d), which sit `d` apart.
template <class T>
T log_sum_exp(const T* x, int64_t c, int64_t stride) {
  T top = x[0];
  for (int64_t k = 1; k < c; ++k) top = std::max(top, x[k * stride]);
  T sum = 0;
  for (int64_t k = 0; k < c; ++k) sum += std::exp(x[k * stride] - top);
  return top + std::log(sum);
}

template <class T>
class ClassLossKernel final : public Kernel {
 public:
  ClassLossKernel(ClassLossGeometry g, bool softmax, bool log_prob)
      : g_(std::move(g)), softmax_(softmax), log_prob_(log_prob) {}

  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(kScores);
    const void* labels = args.inputs[kLabels];
    const T* weight = g_.has_weight ? args.in<T>(kWeight) : nullptr;
    T* y = args.out<T>(0);
    T* log_prob = log_prob_ ? args.out<T>(kLogProb) : nullptr;
    T total = 0, weights = 0;
    for (int64_t n = 0; n < g_.n; ++n) {
      for (int64_t d = 0; d < g_.d; ++d) {
        const int64_t first = n * g_.c * g_.d + d;  // x[n, 0, d]; class k at first + k * d
        const T lse = softmax_ ? log_sum_exp(x + first, g_.c, g_.d) : T(0);
        if (log_prob) {
          for (int64_t k = 0; k < g_.c; ++k) log_prob[first + k * g_.d] = x[first + k * g_.d] - lse;
        }
        const int64_t label = class_of(g_, labels, n * g_.d + d);
        const T w = label < 0 ? T(0) : weight ? weight[label] : T(1);
        const T loss = label < 0 ? T(0) : -w * (x[first + label * g_.d] - lse);
        if (g_.reduction == LossReduction::None) y[n * g_.d + d] = loss;
        total += loss;
        weights += w;
      }
    }
    if (g_.reduction == LossReduction::Sum) y[0] = total;
    // onnxruntime's mean: no samples at all (an empty batch) gives 0 where the node has no
    // ignore_index, else (and for samples all ignored) 0 / 0, NaN.
    const bool no_samples = g_.n * g_.d == 0 && !g_.has_ignore_index;
    if (g_.reduction == LossReduction::Mean) y[0] = no_samples ? T(0) : total / weights;
  }

 private:
  ClassLossGeometry g_;
  bool softmax_, log_prob_;
};

class ClassLossGradKernel final : public GradKernel {
 public:
  ClassLossGradKernel(ClassLossGeometry g, bool softmax, bool log_prob)
      : g_(std::move(g)), softmax_(softmax), log_prob_(log_prob) {}

  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[kScores];
    if (!dx) return;
    const float* x = args.in(kScores);
    const void* labels = args.inputs[kLabels];
    const float* weight = g_.has_weight ? args.in(kWeight) : nullptr;
    const float* dy = args.d_outputs[0];
    const float* dlog_prob = log_prob_ ? args.d_outputs[kLogProb] : nullptr;
    float scale = 1.0f;  // what every sample's loss is multiplied by in the output: 1, or 1 / sum(w)
    if (g_.reduction == LossReduction::Mean) {
      float weights = 0.0f;
      for (int64_t at = 0; at < g_.n * g_.d; ++at) {
        const int64_t label = class_of(g_, labels, at);
        weights += label < 0 ? 0.0f : weight ? weight[label] : 1.0f;
      }
      scale = 1.0f / weights;
    }
    for (int64_t n = 0; n < g_.n; ++n) {
      for (int64_t d = 0; d < g_.d; ++d) {
        const int64_t first = n * g_.c * g_.d + d;
        const int64_t label = class_of(g_, labels, n * g_.d + d);
        const float w = label < 0 ? 0.0f : weight ? weight[label] : 1.0f;
        // dy is null when nothing reads the loss (only log_prob trains)
        const float g = !dy ? 0.0f : w * scale * (g_.reduction == LossReduction::None ? dy[n * g_.d + d] : dy[0]);
        if (!softmax_) {
          for (int64_t k = 0; k < g_.c; ++k) dx[first + k * g_.d] = k == label ? -g : 0.0f;
          continue;
        }
        const float lse = log_sum_exp(x + first, g_.c, g_.d);
        float dlp_sum = 0.0f;
        if (dlog_prob) {
          for (int64_t k = 0; k < g_.c; ++k) dlp_sum += dlog_prob[first + k * g_.d];
        }
        for (int64_t k = 0; k < g_.c; ++k) {
          const int64_t at = first + k * g_.d;
          const float p = std::exp(x[at] - lse);
          float v = g * (p - (k == label ? 1.0f : 0.0f));
          if (dlog_prob) v += dlog_prob[at] - p * dlp_sum;
          dx[at] = v;
        }
      }
    }
  }

 private:
  ClassLossGeometry g_;
  bool softmax_, log_prob_;
};

KernelChoice plan_class_loss(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const bool softmax = node.op_type == "SoftmaxCrossEntropyLoss";
  const bool log_prob = softmax && node.has_output(kLogProb);
  ClassLossGeometry g = class_loss_geometry(node, inputs);
  KernelChoice choice;
  choice.algorithm = softmax ? "log_softmax+gather" : "gather";
  choice.kernel = with_dtype(inputs[kScores].info.dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    using T = decltype(t);
    if constexpr (std::is_floating_point_v<T>) {
      return std::make_unique<ClassLossKernel<T>>(std::move(g), softmax, log_prob);
    } else {
      node_fail<UnsupportedModelError>(node, "the scores must be a float type");
    }
  });
  return choice;
}

GradChoice plan_class_loss_grad(const GradRequest& r) {
  const bool softmax = r.node.op_type == "SoftmaxCrossEntropyLoss";
  GradChoice choice;
  choice.algorithm = softmax ? "softmax-onehot" : "scatter";
  choice.kernel = std::make_unique<ClassLossGradKernel>(class_loss_geometry(r.node, r.inputs), softmax,
                                                        softmax && r.node.has_output(kLogProb));
  return choice;
}

}  // namespace

void register_cpu_class_loss_kernels(KernelRegistry& r) {
  r.add("NegativeLogLikelihoodLoss", plan_class_loss).with_gradient(plan_class_loss_grad);
  r.add("SoftmaxCrossEntropyLoss", plan_class_loss).with_gradient(plan_class_loss_grad);
}

}  // namespace dnnx
