// "BatchNormalization@NHWC" (Note [channels-last conv on the cpu] in conv/conv_nhwc_cpu.cc):
// inference BatchNormalization on X [N, H, W, C], the NCHW kernel's arithmetic (batchnorm_cpu.cc:
// per channel s = scale / sqrt(var + epsilon), t = B - mean * s, then y = x * s + t) with the
// channel the fast axis. DenseNet's pre-activation BatchNormalizations follow its concatenations,
// so no conv absorbs them: in ONNX's layout each one cost a Transpose there and back.
#include <cmath>
#include <vector>

#include "backends/cpu/elementwise/activation_cpu.h"
#include "backends/cpu/runtime/fast_math.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "ops/layout/channels_last.h"
#include "ops/normalization/batchnorm.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

constexpr float kDefaultEpsilon = 1e-5f;

DNNX_VECTOR_CLONES_AVX512 void scale_shift_row(const float* x, const float* s, const float* t, float* y, int64_t c) {
  for (int64_t i = 0; i < c; ++i) y[i] = x[i] * s[i] + t[i];
}

// BatchNormalization+Relu@NHWC (fuse_batchnorm_relu): the Relu kernel's v < 0 ? 0 : v in the same pass.
DNNX_VECTOR_CLONES_AVX512 void scale_shift_relu_row(const float* x, const float* s, const float* t, float* y,
                                                    int64_t c) {
  for (int64_t i = 0; i < c; ++i) y[i] = relu_of(x[i] * s[i] + t[i]);
}

class BatchNormNhwcKernel final : public Kernel {
 public:
  BatchNormNhwcKernel(int64_t pixels, int64_t channels, float epsilon, bool relu, int workers)
      : pixels_(pixels), channels_(channels), epsilon_(epsilon), relu_(relu), workers_(workers) {}

  // x, y [pixels, C]; scale, bias, mean, var [C]. Workspace: s and t [C] each.
  void run(const KernelArgs& args) const override {
    const float *scale = args.in(1), *bias = args.in(2), *mean = args.in(3), *var = args.in(4);
    float* s = static_cast<float*>(args.workspace);
    float* t = s + channels_;
    for (int64_t c = 0; c < channels_; ++c) {
      s[c] = scale[c] / std::sqrt(var[c] + epsilon_);
      t[c] = bias[c] - mean[c] * s[c];
    }
    const float* x = args.in(0);
    float* y = args.out(0);
    const auto row = relu_ ? scale_shift_relu_row : scale_shift_row;
    cpu_thread_pool().parallel_for(pixels_, [&](int64_t begin, int64_t end, int) {
      for (int64_t p = begin; p < end; ++p) row(x + p * channels_, s, t, y + p * channels_, channels_);
    }, workers_);
  }

  size_t workspace_bytes() const { return static_cast<size_t>(2 * channels_) * sizeof(float); }

 private:
  int64_t pixels_, channels_;
  float epsilon_;
  bool relu_;  // BatchNormalization+Relu@NHWC
  int workers_;
};

KernelChoice plan_batchnorm_nhwc(const Node& node, const std::vector<ValueInfo>& inputs,
                                 const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;  // [N, H, W, C]
  const int64_t channels = x.back(), pixels = channels ? numel(x) / channels : 0;
  const int workers = plan_workers(pixels, channels);
  const bool relu = channels_first_op(node.op_type) == "BatchNormalization+Relu";
  auto kernel = std::make_unique<BatchNormNhwcKernel>(pixels, channels, node.attr_float("epsilon", kDefaultEpsilon),
                                                      relu, workers);
  KernelChoice choice;
  choice.algorithm = with_threads(relu ? "nhwc scale+shift+relu" : "nhwc scale+shift", workers);
  choice.workspace_bytes = kernel->workspace_bytes();
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace

void register_cpu_batchnorm_nhwc_kernels(KernelRegistry& r) {
  r.add(std::string("BatchNormalization") + kChannelsLastSuffix, plan_batchnorm_nhwc).refusing([](const Node& node) {
    return batchnorm_training(node) ? std::string("training mode: the batch statistics run in ONNX's layout") : std::string();
  });
  r.add(std::string("BatchNormalization+Relu") + kChannelsLastSuffix, plan_batchnorm_nhwc);  // inference only
}

}  // namespace dnnx
