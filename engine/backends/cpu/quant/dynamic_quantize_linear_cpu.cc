// DynamicQuantizeLinear on the CPU (ops/quant/dynamic_quantize_linear.cc has its meaning): one
// pass for x's range, one to quantize. The parameters' arithmetic is onnxruntime's, in float32.
#include <algorithm>
#include <limits>

#include "backends/cpu/quant/dynamic_quantize_cpu.h"
#include "backends/cpu/quant/quant_codec.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

DynamicQuantParams dynamic_quant_params(const float* x, int64_t n) {
  float lo = std::numeric_limits<float>::max(), hi = std::numeric_limits<float>::lowest();
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  lo = std::min(lo, 0.0f);
  hi = std::max(hi, 0.0f);
  DynamicQuantParams p;
  p.scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  const float initial = 0.0f - lo / p.scale;
  p.zero_point = static_cast<uint8_t>(std::nearbyint(std::max(0.0f, std::min(255.0f, initial))));
  return p;
}

void dynamic_quantize(const float* x, int64_t n, const DynamicQuantParams& p, uint8_t* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = IntCodec<uint8_t>::quantize(x[i] / p.scale, p.zero_point, DType::UInt8, true);
}

namespace {

class DynamicQuantizeKernel final : public Kernel {
 public:
  DynamicQuantizeKernel(int64_t n, bool scale_out, bool zero_point_out)
      : n_(n), scale_out_(scale_out), zero_point_out_(zero_point_out) {}
  void run(const KernelArgs& args) const override {
    const float* x = args.in<float>(0);
    const DynamicQuantParams p = dynamic_quant_params(x, n_);
    dynamic_quantize(x, n_, p, args.out<uint8_t>(0));
    if (scale_out_) *args.out<float>(1) = p.scale;
    if (zero_point_out_) *args.out<uint8_t>(2) = p.zero_point;
  }

 private:
  int64_t n_;
  bool scale_out_, zero_point_out_;  // the node uses its outputs 1 and 2
};

KernelChoice plan_dynamic_quantize(const Node& node, const std::vector<ValueInfo>& inputs,
                                   const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.kernel = std::make_unique<DynamicQuantizeKernel>(numel(inputs[0].info.shape), node.has_output(1),
                                                          node.has_output(2));
  choice.algorithm = "minmax+quantize";
  return choice;
}

}  // namespace

void register_cpu_dynamic_quantize_linear_kernels(KernelRegistry& r) {
  r.add("DynamicQuantizeLinear", plan_dynamic_quantize).with_dtypes(int8_types());
}

}  // namespace dnnx
