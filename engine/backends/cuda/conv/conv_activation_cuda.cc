// Conv+Swish, Conv+HardSwish and Conv+Clip on CUDA: Note [conv activations on cuda] (conv_activation.h).
#include "backends/cuda/conv/conv_activation.h"

#include "backends/cuda/backend/cuda_context.h"

namespace dnnx::cuda {

namespace {

class ConvActivationKernel final : public Kernel {
 public:
  ConvActivationKernel(const CudaContext& ctx, std::unique_ptr<Kernel> conv, ConvActivation act, int64_t n, DType dtype)
      : ctx_(ctx), conv_(std::move(conv)), act_(act), n_(n), dtype_(dtype) {}

  void run(const KernelArgs& args) const override {
    conv_->run(args);
    launch_conv_activation(act_, args.outputs[0], n_, dtype_, ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  std::unique_ptr<Kernel> conv_;
  ConvActivation act_;
  int64_t n_;
  DType dtype_;
};

}  // namespace

const char* conv_activation_name(ConvActivationKind kind) {
  switch (kind) {
    case ConvActivationKind::Swish: return "swish";
    case ConvActivationKind::HardSwish: return "hardswish";
    case ConvActivationKind::Clip: return "clip";
    case ConvActivationKind::None: break;
  }
  return "";
}

KernelFactory conv_activation_factory(const CudaContext& ctx, KernelFactory conv, std::string applied_by) {
  return [&ctx, conv = std::move(conv), applied_by = std::move(applied_by)](
             const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
    KernelChoice choice = conv(node, inputs, outputs);
    if (choice.candidate == applied_by) return choice;  // Note [depthwise activations]
    const ConvActivation act = conv_activation_of(node);
    choice.algorithm += std::string(", then the ") + conv_activation_name(act.kind) + " kernel in place";
    choice.kernel = std::make_unique<ConvActivationKernel>(ctx, std::move(choice.kernel), act,
                                                           numel(outputs[0].shape), outputs[0].dtype);
    return choice;
  };
}

}  // namespace dnnx::cuda
