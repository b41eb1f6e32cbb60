// com.microsoft's QLinearSigmoid and QLinearLeakyRelu on the CPU (ops/quant/qlinear_lookup.cc):
// per run, the 256-entry table of every byte x can hold (dequantize, the float function,
// quantize: onnxruntime's QlinearBuildLookupTable), then one lookup per element.
#include <cmath>

#include "backends/cpu/quant/int_gemm_cpu.h"
#include "backends/cpu/quant/quant_codec.h"
#include "ops/quant/qlinear_lookup.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <class T>
class LookupKernel final : public Kernel {
 public:
  LookupKernel(int64_t n, LookupFunction fn, float alpha, bool x_zp, bool y_zp)
      : n_(n), fn_(fn), alpha_(alpha), x_zp_(x_zp), y_zp_(y_zp) {}

  void run(const KernelArgs& args) const override {
    const float x_scale = args.in<float>(1)[0], y_scale = args.in<float>(3)[0];
    const int32_t zx = x_zp_ ? args.in<T>(2)[0] : 0;
    const T zy = y_zp_ ? args.in<T>(4)[0] : T{};
    T table[256];
    for (int i = 0; i < 256; ++i) {
      const T x = static_cast<T>(static_cast<uint8_t>(i));
      const float v = x_scale * static_cast<float>(static_cast<int32_t>(x) - zx);
      const float f = fn_ == LookupFunction::Sigmoid ? 1.0f / (1.0f + std::exp(-v)) : (v >= 0 ? v : alpha_ * v);
      table[i] = IntCodec<T>::quantize(f / y_scale, zy, DType::Float32, true);
    }
    const auto* x = args.in<uint8_t>(0);
    T* y = args.out<T>(0);
    for (int64_t i = 0; i < n_; ++i) y[i] = table[x[i]];
  }

 private:
  int64_t n_;
  LookupFunction fn_;
  float alpha_;
  bool x_zp_, y_zp_;
};

bool present(const std::vector<ValueInfo>& inputs, size_t i) { return i < inputs.size() && inputs[i].present; }

KernelChoice plan_lookup(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  KernelChoice choice;
  const LookupFunction fn = lookup_function(node);
  const float alpha = node.attr_float("alpha", 0.01f);
  choice.kernel = with_int8_type(outputs[0].dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<LookupKernel<decltype(t)>>(numel(outputs[0].shape), fn, alpha, present(inputs, 2),
                                                       present(inputs, 4));
  });
  choice.algorithm = "256-entry table";
  return choice;
}

}  // namespace

void register_cpu_qlinear_lookup_kernels(KernelRegistry& r) {
  r.add(op_key(kMicrosoftDomain, "QLinearSigmoid"), plan_lookup).with_dtypes(int8_types());
  r.add(op_key(kMicrosoftDomain, "QLinearLeakyRelu"), plan_lookup).with_dtypes(int8_types());
}

}  // namespace dnnx
