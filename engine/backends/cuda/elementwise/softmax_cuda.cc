// Softmax and LogSoftmax through cudnnSoftmaxForward (CUDNN_SOFTMAX_ACCURATE subtracts the
// maximum first, as the CPU backend does). ONNX's [outer, n, inner] view of the input
// (ops/normalization/softmax.h) is cuDNN's [N, C, H, W] = [outer, n, inner, 1] in channel mode.
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/runtime/tensor_desc.h"
#include "ops/normalization/softmax.h"

namespace dnnx::cuda {

namespace {

class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(const CudaContext& ctx, cudnnSoftmaxAlgorithm_t algo, const SoftmaxGeometry& g, DType dtype)
      : ctx_(ctx), algo_(algo), empty_(g.outer * g.n * g.inner == 0) {
    if (!empty_) set_tensor(tensor_, {g.outer, g.n, g.inner, 1}, dtype);
  }

  void run(const KernelArgs& args) const override {
    if (empty_) return;
    const float one = 1.0f, zero = 0.0f;
    check(cudnnSoftmaxForward(ctx_.cudnn, algo_, CUDNN_SOFTMAX_MODE_CHANNEL, &one, tensor_, args.in(0), &zero,
                              tensor_, args.out(0)),
          "cudnnSoftmaxForward");
  }

 private:
  const CudaContext& ctx_;
  cudnnSoftmaxAlgorithm_t algo_;
  bool empty_;
  TensorDescriptor tensor_;
};

KernelFactory softmax_factory(const CudaContext& ctx, cudnnSoftmaxAlgorithm_t algo) {
  return [&ctx, algo](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    const SoftmaxGeometry g = softmax_geometry(node, inputs[0].info.shape);
    if (!fits_int({g.outer, g.n, g.inner})) {
      node_fail<UnsupportedModelError>(node, "input " + shape_str(inputs[0].info.shape) +
                                                 " has more than 2^31-1 elements");
    }
    KernelChoice choice;
    choice.kernel = std::make_unique<SoftmaxKernel>(ctx, algo, g, inputs[0].info.dtype);
    choice.algorithm = algo == CUDNN_SOFTMAX_LOG ? "cudnnSoftmaxForward (log)" : "cudnnSoftmaxForward (accurate)";
    return choice;
  };
}

}  // namespace

void register_cuda_softmax_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Softmax", softmax_factory(ctx, CUDNN_SOFTMAX_ACCURATE)).with_dtypes(kFloatAndHalves);
  r.add("LogSoftmax", softmax_factory(ctx, CUDNN_SOFTMAX_LOG)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda

