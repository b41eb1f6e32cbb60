// com.microsoft's QLinearGlobalAveragePool on the CPU (ops/quant/qlinear_global_average_pool.cc):
// per image and channel the int32 sum minus x_zp * image_size, requantized with
// x_scale / (y_scale * image_size) (MLAS's arithmetic; channels_last walks the channels inner).
#include "backends/cpu/quant/int_gemm_cpu.h"
#include "backends/cpu/quant/quant_codec.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <class T>
class GlobalAveragePoolKernel final : public Kernel {
 public:
  GlobalAveragePoolKernel(int64_t batch, int64_t channels, int64_t image, bool channels_last)
      : batch_(batch), channels_(channels), image_(image), channels_last_(channels_last) {}

  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    const int32_t zx = args.in<T>(2)[0];
    const T zy = args.in<T>(4)[0];
    const float scale = args.in<float>(1)[0] / (args.in<float>(3)[0] * static_cast<float>(image_));
    T* y = args.out<T>(0);
    const int64_t c_step = channels_last_ ? 1 : image_, p_step = channels_last_ ? channels_ : 1;
    for (int64_t b = 0; b < batch_; ++b) {
      const T* img = x + b * channels_ * image_;
      for (int64_t c = 0; c < channels_; ++c) {
        int32_t sum = -zx * static_cast<int32_t>(image_);
        for (int64_t p = 0; p < image_; ++p) sum += img[c * c_step + p * p_step];
        y[b * channels_ + c] = IntCodec<T>::quantize(static_cast<float>(sum) * scale, zy, DType::Float32, true);
      }
    }
  }

 private:
  int64_t batch_, channels_, image_;
  bool channels_last_;
};

KernelChoice plan_qgap(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  const Shape& x = inputs[0].info.shape;
  const bool channels_last = node.attr_int("channels_last", 0) != 0;
  const int64_t channels = channels_last ? x.back() : x[1];
  const int64_t image = channels == 0 || x[0] == 0 ? 0 : numel(x) / (x[0] * channels);
  KernelChoice choice;
  choice.kernel = with_int8_type(outputs[0].dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<GlobalAveragePoolKernel<decltype(t)>>(x[0], channels, image, channels_last);
  });
  choice.algorithm = "int32 sum, requantize";
  return choice;
}

}  // namespace

void register_cpu_qlinear_global_average_pool_kernels(KernelRegistry& r) {
  r.add(op_key(kMicrosoftDomain, "QLinearGlobalAveragePool"), plan_qgap).with_dtypes(int8_types());
}

}  // namespace dnnx
