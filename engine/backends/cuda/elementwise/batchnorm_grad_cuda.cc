// BatchNormalization's gradient on CUDA in its inference form, mirroring batchnorm_grad_cpu.cc
// (the statistics are constants: a frozen BN inside the trainable tail). Per channel c, with
// s = scale / sqrt(var + eps) and xhat = (x - mean) / sqrt(var + eps):
//   dX = dY * s      dscale = sum(dY * xhat)      dB = sum(dY)
// (grad_kernels.h: one block per channel for the sums, fixed order). Training the running mean
// or variance is refused at plan time, as on the CPU.
#include <algorithm>

#include "backends/cuda/train/grad_kernels.h"
#include "backends/cuda/backend/cuda_kernels.h"

namespace dnnx::cuda {

namespace {

constexpr float kDefaultEpsilon = 1e-5f;
enum BatchNormInput : size_t { kX = 0, kScale = 1, kBias = 2, kMean = 3, kVar = 4 };

class BatchNormGradKernel final : public GradKernel {
 public:
  BatchNormGradKernel(const CudaContext& ctx, int64_t batch, int64_t channels, int64_t plane, float epsilon)
      : ctx_(ctx), batch_(batch), channels_(channels), plane_(plane), epsilon_(epsilon) {}

  // x, dy, dx [N, C, plane]; scale, bias, mean, var [C].
  void run(const GradArgs& args) const override {
    launch_batchnorm_grad(args.in(kX), args.d_outputs[0], args.in(kScale), args.in(kMean), args.in(kVar),
                          args.d_inputs[kX], args.d_inputs[kScale], args.d_inputs[kBias], batch_, channels_, plane_,
                          epsilon_, ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  int64_t batch_, channels_, plane_;
  float epsilon_;
};

GradChoice plan_batchnorm_grad(const GradRequest& r) {
  // The statistics never need a gradient here: OpDef::untrainable (ops/normalization/batchnorm.cc) refused that.
  const Shape& x = r.inputs[kX].info.shape;
  const int64_t plane = numel(x) / std::max<int64_t>(1, x[0] * x[1]);
  GradChoice choice;
  choice.algorithm = "per-channel sums kernel + scale kernel";
  choice.kernel = std::make_unique<BatchNormGradKernel>(cuda_context_of(r), x[0], x[1], plane,
                                                        r.node.attr_float("epsilon", kDefaultEpsilon));
  return choice;
}

}  // namespace

void register_cuda_batchnorm_grad_kernels(KernelRegistry& r, const CudaContext&) { r.at("BatchNormalization").with_gradient(plan_batchnorm_grad); }

}  // namespace dnnx::cuda
