// Relu, Sigmoid, Tanh through cudnnActivationForward, the tensor viewed as [1, n, 1, 1], float32
// or float16 (fp32 arithmetic inside cuDNN; alpha/beta are floats for both). Neg through
// cudnnAddTensor with alpha -1 and beta 0 (y = -x; cuDNN's activations have no negation), and
// its gradient (dX = -dY) by the same call on dY, registered with it. Integer Neg, and Abs on
// float32, int32 and int64, through the typed kernels (typed_kernels.cu).
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/elementwise/typed_binary.h"
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

// y = -x over n elements of `dtype`, the tensor viewed as [1, n, 1, 1]: y is written, not read (beta 0).
class Negation {
 public:
  Negation(const CudaContext& ctx, int64_t n, DType dtype) : ctx_(ctx), n_(n) {
    if (n > 0) set_tensor(tensor_, {1, n, 1, 1}, dtype);
  }
  void operator()(const void* x, void* y) const {
    if (n_ == 0) return;
    const float minus_one = -1.0f, zero = 0.0f;
    check(cudnnAddTensor(ctx_.cudnn, &minus_one, tensor_, x, &zero, tensor_, y), "cudnnAddTensor (Neg)");
  }

 private:
  const CudaContext& ctx_;
  int64_t n_;
  TensorDescriptor tensor_;
};

class NegKernel final : public Kernel {
 public:
  NegKernel(const CudaContext& ctx, int64_t n, DType dtype) : negate_(ctx, n, dtype) {}
  void run(const KernelArgs& args) const override { negate_(args.in<void>(0), args.out<void>(0)); }

 private:
  Negation negate_;
};

class NegGradKernel final : public GradKernel {
 public:
  NegGradKernel(const CudaContext& ctx, int64_t n) : negate_(ctx, n, DType::Float32) {}
  void run(const GradArgs& args) const override {
    if (args.d_inputs[0]) negate_(args.d_outputs[0], args.d_inputs[0]);
  }

 private:
  Negation negate_;
};

const Shape& checked_elements(const Node& node, const Shape& x) {
  if (!fits_int(x)) node_fail<UnsupportedModelError>(node, "X " + shape_str(x) + " has more than 2^31-1 elements");
  return x;
}

// y = op x by the typed kernel (float32, int32, int64).
KernelChoice typed_sign_choice(const CudaContext& ctx, TypedUnary op, const Node& node, const std::vector<ValueInfo>& inputs) {
  const ElemType type = typed_element(node, inputs[0].info.dtype);
  const int64_t n = numel(inputs[0].info.shape);
  const CudaContext* c = &ctx;
  return make_choice("typed elementwise kernel", [=](const KernelArgs& a) {
    launch_typed_unary(op, type, a.in<void>(0), a.out<void>(0), n, c->stream);
  });
}

KernelFactory neg_factory(const CudaContext& ctx) {
  return [&ctx](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    if (is_integer(inputs[0].info.dtype)) return typed_sign_choice(ctx, TypedUnary::Neg, node, inputs);
    KernelChoice choice;
    choice.kernel = std::make_unique<NegKernel>(ctx, numel(checked_elements(node, inputs[0].info.shape)),
                                                inputs[0].info.dtype);
    choice.algorithm = "cudnnAddTensor (alpha -1)";
    return choice;
  };
}

GradChoice plan_neg_grad(const GradRequest& r) {
  GradChoice choice;
  const int64_t n = numel(checked_elements(r.node, r.inputs[0].info.shape));
  choice.kernel = std::make_unique<NegGradKernel>(cuda_context_of(r), n);
  choice.algorithm = "cudnnAddTensor (alpha -1)";
  return choice;
}

}  // namespace

void register_cuda_activation_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Relu", activation_factory(ctx, CUDNN_ACTIVATION_RELU)).with_dtypes(kFloatAndHalves);
  r.add("Sigmoid", activation_factory(ctx, CUDNN_ACTIVATION_SIGMOID)).with_dtypes(kFloatAndHalves);
  r.add("Tanh", activation_factory(ctx, CUDNN_ACTIVATION_TANH)).with_dtypes(kFloatAndHalves);
  r.add("Neg", neg_factory(ctx)).with_dtypes(kFloatAndHalves).with_gradient(plan_neg_grad);
  r.add("Abs", [&ctx](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    return typed_sign_choice(ctx, TypedUnary::Abs, node, inputs);
  });
}

}  // namespace dnnx::cuda
