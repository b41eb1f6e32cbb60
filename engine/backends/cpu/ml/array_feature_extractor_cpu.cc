// ArrayFeatureExtractor on the CPU (ops/ml/array_feature_extractor.cc has its semantics): a
// gather along the last axis, element by element (strings copy their pointers).
#include "ir/errors.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <class T>
class ArrayFeatureExtractorKernel final : public Kernel {
 public:
  ArrayFeatureExtractorKernel(std::string where, int64_t rows, int64_t stride, int64_t count)
      : where_(std::move(where)), rows_(rows), stride_(stride), count_(count) {}
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    const int64_t* y = args.in<int64_t>(1);
    T* z = args.out<T>(0);
    for (int64_t j = 0; j < count_; ++j) {
      if (y[j] < 0 || y[j] >= stride_) {
        throw InputError(where_ + ": Y[" + std::to_string(j) + "] = " + std::to_string(y[j]) +
                                " is outside [0, " + std::to_string(stride_) + ") (X's last dim)");
      }
    }
    for (int64_t r = 0; r < rows_; ++r, x += stride_) {
      for (int64_t j = 0; j < count_; ++j) *z++ = x[y[j]];
    }
  }

 private:
  std::string where_;
  int64_t rows_, stride_, count_;
};

KernelChoice plan_array_feature_extractor(const Node& node, const std::vector<ValueInfo>& inputs,
                                          const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const int64_t stride = x.back();
  const int64_t rows = stride == 0 ? 0 : numel(x) / stride;
  const int64_t count = numel(inputs[1].info.shape);
  KernelChoice choice;
  choice.algorithm = "gather along the last axis";
  switch (inputs[0].info.dtype) {
    case DType::Float64:
      choice.kernel = std::make_unique<ArrayFeatureExtractorKernel<double>>(node.where(), rows, stride, count);
      break;
    case DType::Int64:
      choice.kernel = std::make_unique<ArrayFeatureExtractorKernel<int64_t>>(node.where(), rows, stride, count);
      break;
    case DType::Int32:
      choice.kernel = std::make_unique<ArrayFeatureExtractorKernel<int32_t>>(node.where(), rows, stride, count);
      break;
    case DType::String:
      choice.kernel = std::make_unique<ArrayFeatureExtractorKernel<StringPtr>>(node.where(), rows, stride, count);
      break;
    default:
      choice.kernel = std::make_unique<ArrayFeatureExtractorKernel<float>>(node.where(), rows, stride, count);
  }
  return choice;
}

}  // namespace

void register_cpu_array_feature_extractor_kernels(KernelRegistry& r) {
  r.add("ai.onnx.ml::ArrayFeatureExtractor", plan_array_feature_extractor)
      .with_dtypes({DType::Float32, DType::Float64, DType::String});
}

}  // namespace dnnx
