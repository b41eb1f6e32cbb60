// Scaler on the CPU (ops/ml/scaler.cc has its semantics).
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

// W: the arithmetic's type (double for a float64 X, float otherwise, as onnxruntime promotes).
template <class T, class W>
class ScalerKernel final : public Kernel {
 public:
  ScalerKernel(std::vector<float> scale, std::vector<float> offset, int64_t n, int64_t stride)
      : scale_(std::move(scale)), offset_(std::move(offset)), n_(n), stride_(stride) {}
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    float* y = args.out<float>(0);
    const bool per_feature = scale_.size() != 1;
    for (int64_t i = 0; i < n_; ++i) {
      const size_t c = per_feature ? static_cast<size_t>(i % stride_) : 0;
      y[i] = static_cast<float>((static_cast<W>(x[i]) - static_cast<W>(offset_[c])) * static_cast<W>(scale_[c]));
    }
  }

 private:
  std::vector<float> scale_, offset_;
  int64_t n_, stride_;
};

template <class T, class W>
std::unique_ptr<Kernel> make_scaler(const Node& node, const Shape& x) {
  return std::make_unique<ScalerKernel<T, W>>(node.attr_floats("scale", {}), node.attr_floats("offset", {}), numel(x),
                                              x.size() == 1 ? x[0] : x[1]);
}

KernelChoice plan_scaler(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  KernelChoice choice;
  choice.algorithm = "elementwise";
  switch (inputs[0].info.dtype) {
    case DType::Float64: choice.kernel = make_scaler<double, double>(node, x); break;
    case DType::Int64: choice.kernel = make_scaler<int64_t, float>(node, x); break;
    case DType::Int32: choice.kernel = make_scaler<int32_t, float>(node, x); break;
    default: choice.kernel = make_scaler<float, float>(node, x);
  }
  return choice;
}

}  // namespace

void register_cpu_scaler_kernels(KernelRegistry& r) {
  r.add("ai.onnx.ml::Scaler", plan_scaler).with_dtypes({DType::Float32, DType::Float64});
}

}  // namespace dnnx
