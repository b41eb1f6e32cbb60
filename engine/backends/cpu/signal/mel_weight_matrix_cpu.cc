// MelWeightMatrix on the CPU (ops/signal/mel_weight_matrix.cc): the filter edges from the
// run-time sample rate and edge frequencies (in double), then each filter's rising and falling
// slopes written into W [spectrogram bins, mel bins].
#include <algorithm>
#include <cmath>

#include "ops/signal/signal.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <class T>
class MelKernel final : public Kernel {
 public:
  MelKernel(int64_t mel_bins, int64_t dft_length, DType rate_type, std::string where)
      : mel_bins_(mel_bins), dft_length_(dft_length), rate_type_(rate_type), where_(std::move(where)) {}

  void run(const KernelArgs& args) const override {
    const int64_t rate = rate_type_ == DType::Int32 ? args.in<int32_t>(2)[0] : args.in<int64_t>(2)[0];
    const double lower = args.in<float>(3)[0], upper = args.in<float>(4)[0];
    const int64_t spectrum = dft_length_ / 2 + 1;
    if (rate <= 0) throw InputError(where_ + ": sample_rate " + std::to_string(rate) + " must be positive");
    const double low_mel = 2595.0 * std::log10(1.0 + lower / 700.0);
    const double high_mel = 2595.0 * std::log10(1.0 + upper / 700.0);
    const double step = (high_mel - low_mel) / static_cast<double>(mel_bins_ + 2);
    std::vector<int64_t> bins(mel_bins_ + 2);
    for (int64_t i = 0; i < mel_bins_ + 2; ++i) {
      const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595.0) - 1.0);
      bins[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft_length_ + 1) * hz / static_cast<double>(rate)));
      if (bins[i] < 0 || bins[i] >= spectrum) {
        throw InputError(where_ + ": the edge frequencies " + std::to_string(lower) + " to " + std::to_string(upper) +
                         " Hz reach spectrogram bin " + std::to_string(bins[i]) + ", outside the " +
                         std::to_string(spectrum) + " bins of dft_length " + std::to_string(dft_length_) +
                         " at sample_rate " + std::to_string(rate));
      }
    }
    T* w = args.out<T>(0);
    std::fill(w, w + spectrum * mel_bins_, T(0));
    for (int64_t m = 0; m < mel_bins_; ++m) {
      const int64_t lo = bins[m], center = bins[m + 1], hi = bins[m + 2];
      if (center == lo) {
        w[center * mel_bins_ + m] = T(1);
      } else {
        for (int64_t j = lo; j <= center; ++j) w[j * mel_bins_ + m] = static_cast<T>(double(j - lo) / double(center - lo));
      }
      for (int64_t j = center; j < hi; ++j) w[j * mel_bins_ + m] = static_cast<T>(double(hi - j) / double(hi - center));
    }
  }

 private:
  int64_t mel_bins_, dft_length_;
  DType rate_type_;
  std::string where_;
};

KernelChoice plan_mel(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "direct";
  choice.kernel = std::make_unique<MelKernel<float>>(scalar_int_input(node, inputs, 0, "num_mel_bins"),
                                                     scalar_int_input(node, inputs, 1, "dft_length"),
                                                     inputs[2].info.dtype, node.where());
  return choice;
}

}  // namespace

void register_cpu_mel_weight_matrix_kernels(KernelRegistry& r) { r.add("MelWeightMatrix", plan_mel); }

}  // namespace dnnx
