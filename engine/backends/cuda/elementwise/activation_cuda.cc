// Relu, Sigmoid, Tanh through cudnnActivationForward, the tensor viewed as [1, n, 1, 1], float32
// or float16 (fp32 arithmetic inside cuDNN; alpha/beta are floats for both).
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/runtime/tensor_desc.h"

namespace dnnx::cuda {

namespace {

class ActivationKernel final : public Kernel {
 public:
  ActivationKernel(const CudaContext& ctx, cudnnActivationMode_t mode, int64_t n, DType dtype) : ctx_(ctx), n_(n) {
    check(cudnnSetActivationDescriptor(activation_, mode, CUDNN_NOT_PROPAGATE_NAN, 0.0),
          "cudnnSetActivationDescriptor");
    if (n > 0) set_tensor(tensor_, {1, n, 1, 1}, dtype);
  }

  void run(const KernelArgs& args) const override {
    if (n_ == 0) return;
    const float one = 1.0f, zero = 0.0f;
    check(cudnnActivationForward(ctx_.cudnn, activation_, &one, tensor_, args.in(0), &zero, tensor_, args.out(0)),
          "cudnnActivationForward");
  }

 private:
  const CudaContext& ctx_;
  int64_t n_;
  ActivationDescriptor activation_;
  TensorDescriptor tensor_;
};

KernelFactory activation_factory(const CudaContext& ctx, cudnnActivationMode_t mode) {
  return [&ctx, mode](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    const Shape& x = inputs[0].info.shape;
    if (!fits_int(x)) {
      node_fail<UnsupportedModelError>(node, "X " + shape_str(x) + " has more than 2^31-1 elements");
    }
    KernelChoice choice;
    choice.kernel = std::make_unique<ActivationKernel>(ctx, mode, numel(x), inputs[0].info.dtype);
    choice.algorithm = "cudnnActivationForward";
    return choice;
  };
}

}  // namespace

void register_cuda_activation_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Relu", activation_factory(ctx, CUDNN_ACTIVATION_RELU)).with_dtypes(kFloatAndHalf);
  r.add("Sigmoid", activation_factory(ctx, CUDNN_ACTIVATION_SIGMOID)).with_dtypes(kFloatAndHalf);
  r.add("Tanh", activation_factory(ctx, CUDNN_ACTIVATION_TANH)).with_dtypes(kFloatAndHalf);
}

}  // namespace dnnx::cuda
