// BatchNormalization on the CPU. Inference: per channel, y = x * s + t with
// s = scale / sqrt(var + epsilon) and t = B - mean * s, computed when the kernel runs (the
// statistics may be computed tensors); then one multiply-add per element. BatchNormalization+Relu
// (fuse_batchnorm_relu) takes max(0, y) in the same pass: the values the two nodes give.
#include <algorithm>
#include <cmath>

#include "backends/cpu/elementwise/activation_cpu.h"
#include "backends/cpu/runtime/fast_math.h"
#include "ops/normalization/batchnorm.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

constexpr float kDefaultEpsilon = 1e-5f;

// Note [batchnorm rows]: s and t are computed once per call into the workspace ([C] each); with
// a plane of one element (BatchNorm1d over [N, C] tokens, as LeViT's 47 layers: x
// [196, C]) the loop runs along the channels of each row instead of one short plane at a time
// (a strided walk of plane 1 took ~0.05 ms a layer). Each element is x * s[c] + t[c] either way.
DNNX_VECTOR_CLONES void scale_shift_row(const float* x, float* y, int64_t n, const float* s, const float* t) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s[i] + t[i];
}

DNNX_VECTOR_CLONES void scale_shift_plane(const float* x, float* y, int64_t n, float s, float t) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s + t;
}

// The +Relu forms, with the Relu kernel's v < 0 ? 0 : v (NaN passes through, as onnxruntime's).
DNNX_VECTOR_CLONES void scale_shift_relu_row(const float* x, float* y, int64_t n, const float* s, const float* t) {
  for (int64_t i = 0; i < n; ++i) y[i] = relu_of(x[i] * s[i] + t[i]);
}

DNNX_VECTOR_CLONES void scale_shift_relu_plane(const float* x, float* y, int64_t n, float s, float t) {
  for (int64_t i = 0; i < n; ++i) y[i] = relu_of(x[i] * s + t);
}

class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(int64_t batch, int64_t channels, int64_t plane, float epsilon, bool relu)
      : batch_(batch), channels_(channels), plane_(plane), epsilon_(epsilon), relu_(relu) {}

  // x, y [N, C, plane]; scale, bias, mean, var [C]; workspace [2, C].
  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    const float *scale = args.in(1), *bias = args.in(2), *mean = args.in(3), *var = args.in(4);
    float* y = args.out(0);
    float* s = static_cast<float*>(args.workspace);
    float* t = s + channels_;
    for (int64_t c = 0; c < channels_; ++c) {
      s[c] = scale[c] / std::sqrt(var[c] + epsilon_);
      t[c] = bias[c] - mean[c] * s[c];
    }
    if (plane_ == 1) {
      const auto row = relu_ ? scale_shift_relu_row : scale_shift_row;
      for (int64_t n = 0; n < batch_; ++n) row(x + n * channels_, y + n * channels_, channels_, s, t);
      return;
    }
    const auto plane = relu_ ? scale_shift_relu_plane : scale_shift_plane;
    for (int64_t n = 0; n < batch_; ++n) {
      for (int64_t c = 0; c < channels_; ++c) {
        const int64_t at = (n * channels_ + c) * plane_;
        plane(x + at, y + at, plane_, s[c], t[c]);
      }
    }
  }

 private:
  int64_t batch_, channels_, plane_;
  float epsilon_;
  bool relu_;  // BatchNormalization+Relu
};

// Training mode (ops/normalization/batchnorm.cc): each channel's mean and population variance
// over N and the plane (accumulated in double), then y as above, and the running statistics
// (outputs 1 and 2, when present).
class BatchNormTrainingKernel final : public Kernel {
 public:
  BatchNormTrainingKernel(int64_t batch, int64_t channels, int64_t plane, float epsilon, float momentum,
                          size_t outputs)
      : batch_(batch), channels_(channels), plane_(plane), epsilon_(epsilon), momentum_(momentum), outputs_(outputs) {}

  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    const float *scale = args.in(1), *bias = args.in(2), *input_mean = args.in(3), *input_var = args.in(4);
    float* y = args.out(0);
    // null where omitted; args.outputs holds one pointer per output the node lists
    float* running_mean = outputs_ > 1 ? args.out(1) : nullptr;
    float* running_var = outputs_ > 2 ? args.out(2) : nullptr;
    const double count = static_cast<double>(batch_ * plane_);
    for (int64_t c = 0; c < channels_; ++c) {
      double sum = 0, squares = 0;
      for (int64_t n = 0; n < batch_; ++n) {
        const float* row = x + (n * channels_ + c) * plane_;
        for (int64_t i = 0; i < plane_; ++i) sum += row[i];
      }
      const double mean = sum / count;  // an empty batch: NaN statistics, as onnxruntime's
      for (int64_t n = 0; n < batch_; ++n) {
        const float* row = x + (n * channels_ + c) * plane_;
        for (int64_t i = 0; i < plane_; ++i) squares += (row[i] - mean) * (row[i] - mean);
      }
      const double var = squares / count;
      const float s = static_cast<float>(scale[c] / std::sqrt(var + epsilon_));
      const float t = static_cast<float>(bias[c] - mean * s);
      for (int64_t n = 0; n < batch_; ++n) {
        const int64_t at = (n * channels_ + c) * plane_;
        for (int64_t i = 0; i < plane_; ++i) y[at + i] = x[at + i] * s + t;
      }
      if (running_mean) running_mean[c] = static_cast<float>(input_mean[c] * momentum_ + mean * (1.0 - momentum_));
      if (running_var) running_var[c] = static_cast<float>(input_var[c] * momentum_ + var * (1.0 - momentum_));
    }
  }

 private:
  int64_t batch_, channels_, plane_;
  float epsilon_, momentum_;
  size_t outputs_;  // the node's output count (1 to 3)
};

constexpr float kDefaultMomentum = 0.9f;

KernelChoice plan_batchnorm(const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const int64_t plane = numel(x) / std::max<int64_t>(1, x[0] * x[1]);
  KernelChoice choice;
  if (batchnorm_training(node)) {
    choice.algorithm = "batch statistics";
    choice.kernel = std::make_unique<BatchNormTrainingKernel>(x[0], x[1], plane, node.attr_float("epsilon", kDefaultEpsilon),
                                                              node.attr_float("momentum", kDefaultMomentum),
                                                              node.outputs.size());
    return choice;
  }
  const bool relu = node.op_type == "BatchNormalization+Relu";
  choice.algorithm = std::string(plane == 1 ? "scale+shift rows" : "scale+shift") + (relu ? "+relu" : "");
  choice.workspace_bytes = static_cast<size_t>(2 * x[1]) * sizeof(float);
  choice.kernel = std::make_unique<BatchNormKernel>(x[0], x[1], plane, node.attr_float("epsilon", kDefaultEpsilon), relu);
  return choice;
}

}  // namespace

void register_cpu_batchnorm_kernels(KernelRegistry& r) {
  r.add("BatchNormalization", plan_batchnorm);
  r.add("BatchNormalization+Relu", plan_batchnorm);  // fuse_batchnorm_relu makes inference ones only
}

}  // namespace dnnx
