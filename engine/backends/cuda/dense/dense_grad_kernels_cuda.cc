// The gradients of the pointwise layers through cuDNN, from the kept output y (and the input x,
// which cudnnActivationBackward also takes), mirroring backends/cpu/elementwise/activation_grad_cpu.cc and
// softmax_grad_cpu.cc:
//   Relu, Sigmoid, Tanh   cudnnActivationBackward, the tensor viewed as [1, n, 1, 1]
//   Softmax, LogSoftmax   cudnnSoftmaxBackward (ACCURATE / LOG) over ONNX's [outer, n, inner]
//                         view, cuDNN's [outer, n, inner, 1] in channel mode (as the forward)
// Gemm and MatMul live in gemm_grad_cuda.cc and matmul_grad_cuda.cc; this file holds the list.
// Every kernel overwrites dX (beta 0), never accumulates.
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/runtime/tensor_desc.h"
#include "ops/normalization/softmax.h"

namespace dnnx::cuda {

namespace {

class ActivationGradKernel final : public GradKernel {
 public:
  ActivationGradKernel(const CudaContext& ctx, cudnnActivationMode_t mode, int64_t n) : ctx_(ctx), n_(n) {
    check(cudnnSetActivationDescriptor(activation_, mode, CUDNN_NOT_PROPAGATE_NAN, 0.0),
          "cudnnSetActivationDescriptor");
    if (n > 0) set_tensor(tensor_, {1, n, 1, 1});
  }

  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx || n_ == 0) return;
    const float one = 1.0f, zero = 0.0f;
    check(cudnnActivationBackward(ctx_.cudnn, activation_, &one, tensor_, args.out(0), tensor_, args.d_outputs[0],
                                  tensor_, args.in(0), &zero, tensor_, dx),
          "cudnnActivationBackward");
  }

 private:
  const CudaContext& ctx_;
  int64_t n_;
  ActivationDescriptor activation_;
  TensorDescriptor tensor_;
};

GradFactory activation_grad(cudnnActivationMode_t mode) {
  return [mode](const GradRequest& r) {
    const Shape& x = r.inputs[0].info.shape;
    if (!fits_int(x)) node_fail<UnsupportedModelError>(r.node, "X " + shape_str(x) + " has more than 2^31-1 elements");
    GradChoice choice;
    choice.kernel = std::make_unique<ActivationGradKernel>(cuda_context_of(r), mode, numel(x));
    choice.algorithm = "cudnnActivationBackward";
    return choice;
  };
}

class SoftmaxGradKernel final : public GradKernel {
 public:
  SoftmaxGradKernel(const CudaContext& ctx, cudnnSoftmaxAlgorithm_t algo, const SoftmaxGeometry& g)
      : ctx_(ctx), algo_(algo), empty_(g.outer * g.n * g.inner == 0) {
    if (!empty_) set_tensor(tensor_, {g.outer, g.n, g.inner, 1});
  }

  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx || empty_) return;
    const float one = 1.0f, zero = 0.0f;
    check(cudnnSoftmaxBackward(ctx_.cudnn, algo_, CUDNN_SOFTMAX_MODE_CHANNEL, &one, tensor_, args.out(0), tensor_,
                               args.d_outputs[0], &zero, tensor_, dx),
          "cudnnSoftmaxBackward");
  }

 private:
  const CudaContext& ctx_;
  cudnnSoftmaxAlgorithm_t algo_;
  bool empty_;
  TensorDescriptor tensor_;
};

GradFactory softmax_grad(cudnnSoftmaxAlgorithm_t algo) {
  return [algo](const GradRequest& r) {
    const SoftmaxGeometry g = softmax_geometry(r.node, r.inputs[0].info.shape);
    if (!fits_int({g.outer, g.n, g.inner})) {
      node_fail<UnsupportedModelError>(r.node, "input " + shape_str(r.inputs[0].info.shape) +
                                                   " has more than 2^31-1 elements");
    }
    GradChoice choice;
    choice.kernel = std::make_unique<SoftmaxGradKernel>(cuda_context_of(r), algo, g);
    choice.algorithm = algo == CUDNN_SOFTMAX_LOG ? "cudnnSoftmaxBackward (log)" : "cudnnSoftmaxBackward (accurate)";
    return choice;
  };
}

}  // namespace

void register_cuda_dense_grad_kernels(KernelRegistry& r, const CudaContext&) {
  r.at("Relu").with_gradient(activation_grad(CUDNN_ACTIVATION_RELU));
  r.at("Sigmoid").with_gradient(activation_grad(CUDNN_ACTIVATION_SIGMOID));
  r.at("Tanh").with_gradient(activation_grad(CUDNN_ACTIVATION_TANH));
  r.at("Softmax").with_gradient(softmax_grad(CUDNN_SOFTMAX_ACCURATE));
  r.at("LogSoftmax").with_gradient(softmax_grad(CUDNN_SOFTMAX_LOG));
}

}  // namespace dnnx::cuda
