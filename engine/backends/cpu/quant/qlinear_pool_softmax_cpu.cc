// com.microsoft's QLinearAveragePool and QLinearSoftmax on the CPU (ops/quant/
// qlinear_pool_softmax.cc has their meaning, onnxruntime's arithmetic step for step).
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "backends/cpu/quant/int_gemm_cpu.h"
#include "backends/cpu/quant/quant_codec.h"
#include "ops/quant/qlinear_pool_softmax.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

bool present(const std::vector<ValueInfo>& inputs, size_t i) { return i < inputs.size() && inputs[i].present; }

template <class T>
class QLinearAveragePoolKernel final : public Kernel {
 public:
  QLinearAveragePoolKernel(ConvGeometry g, int64_t batch, int64_t channels, bool channels_last, bool include_pad,
                           bool x_zp, bool y_zp)
      : g_(std::move(g)), batch_(batch), channels_(channels), channels_last_(channels_last),
        include_pad_(include_pad), x_zp_(x_zp), y_zp_(y_zp) {}

  void run(const KernelArgs& args) const override {
    const float x_scale = args.in<float>(1)[0], y_scale = args.in<float>(3)[0];
    const int32_t zx = x_zp_ ? args.in<T>(2)[0] : 0;
    const T zy = y_zp_ ? args.in<T>(4)[0] : T{};
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    const int64_t in_size = g_.input_size(), out_size = g_.output_size();
    // element (image b, channel c, spatial index s) of a tensor of `size` spatial elements
    auto at = [&](int64_t b, int64_t c, int64_t s, int64_t size) {
      return channels_last_ ? (b * size + s) * channels_ + c : (b * channels_ + c) * size + s;
    };
    const int64_t kernel_size = g_.kernel_size();
    for (int64_t b = 0; b < batch_; ++b) {
      for (int64_t c = 0; c < channels_; ++c) {
        int64_t o = 0;
        for (int64_t od = 0; od < g_.output[0]; ++od) {
          const auto [d0, d1] = range(0, od);
          for (int64_t oh = 0; oh < g_.output[1]; ++oh) {
            const auto [h0, h1] = range(1, oh);
            for (int64_t ow = 0; ow < g_.output[2]; ++ow, ++o) {
              const auto [w0, w1] = range(2, ow);
              float sum = 0.0f;
              for (int64_t d = d0; d < d1; ++d) {
                for (int64_t h = h0; h < h1; ++h) {
                  for (int64_t w = w0; w < w1; ++w) {
                    const int64_t s = (d * g_.input[1] + h) * g_.input[2] + w;
                    sum += x_scale * static_cast<float>(static_cast<int32_t>(x[at(b, c, s, in_size)]) - zx);
                  }
                }
              }
              const int64_t count = include_pad_ ? kernel_size : (d1 - d0) * (h1 - h0) * (w1 - w0);
              const float avg = sum / static_cast<float>(count);
              y[at(b, c, o, out_size)] = IntCodec<T>::quantize_offset_first(avg / y_scale, zy);
            }
          }
        }
      }
    }
  }

 private:
  // onnxruntime's window along `dim`: [start, min(start + k, in)) with start clamped at 0.
  std::pair<int64_t, int64_t> range(size_t dim, int64_t out) const {
    const int64_t start = out * g_.strides[dim] - g_.pads_begin[dim];
    const int64_t end = std::min(start + g_.kernel[dim], g_.input[dim]);
    return {std::max<int64_t>(start, 0), end};
  }

  ConvGeometry g_;
  int64_t batch_, channels_;
  bool channels_last_, include_pad_, x_zp_, y_zp_;
};

KernelChoice plan_qlinear_average_pool(const Node& node, const std::vector<ValueInfo>& inputs,
                                       const std::vector<TensorInfo>& outputs) {
  const Shape& x = inputs[0].info.shape;
  const bool channels_last = node.attr_int("channels_last", 0) != 0;
  const ConvGeometry g = qlinear_pool_geometry(node, x).expanded_to(3);
  const int64_t channels = channels_last ? x.back() : x[1];
  const bool include_pad = node.attr_int("count_include_pad", 0) != 0;
  KernelChoice choice;
  choice.kernel = with_int8_type(outputs[0].dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<QLinearAveragePoolKernel<decltype(t)>>(g, x[0], channels, channels_last, include_pad,
                                                                   present(inputs, 2), present(inputs, 4));
  });
  choice.algorithm = "float32 window sums, requantize";
  return choice;
}

template <class T>
class QLinearSoftmaxKernel final : public Kernel {
 public:
  QLinearSoftmaxKernel(SoftmaxRows rows, bool y_zp) : rows_(rows), y_zp_(y_zp) {}

  void run(const KernelArgs& args) const override {
    constexpr bool kSigned = std::is_same_v<T, int8_t>;
    const float x_scale = args.in<float>(1)[0];
    // onnxruntime: y = round(e * floor(1 / y_scale) / sum) + zp
    const float y_scale = std::floor(1.0f / args.in<float>(3)[0]);
    const int32_t zy = y_zp_ ? args.in<T>(4)[0] : 0;
    float table[256];
    double shift = std::log(static_cast<double>(FLT_MAX) / static_cast<double>(rows_.d));
    shift = std::max(0.0, shift - 5.0) / x_scale;
    for (int32_t i = 0; i < 256; ++i) {
      const uint8_t index = static_cast<uint8_t>(kSigned ? i - 128 : i);
      table[index] = static_cast<float>(std::exp((static_cast<double>(i) - 255 + shift) * static_cast<double>(x_scale)));
    }
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    const int64_t step = rows_.inner;
    for (int64_t o = 0; o < rows_.outer; ++o) {
      for (int64_t i = 0; i < rows_.inner; ++i) {
        const int64_t base = o * rows_.d * rows_.inner + i;
        T xmax = x[base];
        for (int64_t k = 1; k < rows_.d; ++k) xmax = std::max(xmax, x[base + k * step]);
        // the row's maximum reads the table's last entry
        auto entry = [&](T v) -> float {
          if constexpr (kSigned) return table[static_cast<uint8_t>(int32_t{127} - xmax + v)];
          else return table[255 - xmax + v];
        };
        float sum = 0.0f;
        for (int64_t k = 0; k < rows_.d; ++k) sum += entry(x[base + k * step]);
        for (int64_t k = 0; k < rows_.d; ++k) {
          if (sum == 0.0f) {  // onnxruntime leaves such a row unwritten: dnnx writes the zero point
            y[base + k * step] = static_cast<T>(zy);
            continue;
          }
          const float e = entry(x[base + k * step]);
          if constexpr (kSigned) {
            // onnxruntime 1.32 saturates here (its older sources wrapped past 127)
            const int32_t q = static_cast<int32_t>(std::nearbyint((e * y_scale) / sum)) + zy;
            y[base + k * step] = static_cast<T>(std::min(q, int32_t{127}));
          } else {
            const uint32_t q = static_cast<uint32_t>(std::nearbyint((e * y_scale) / sum)) + static_cast<uint32_t>(zy);
            y[base + k * step] = q > 255 ? static_cast<T>(255) : static_cast<T>(q);
          }
        }
      }
    }
  }

 private:
  SoftmaxRows rows_;
  bool y_zp_;
};

KernelChoice plan_qlinear_softmax(const Node& node, const std::vector<ValueInfo>& inputs,
                                  const std::vector<TensorInfo>& outputs) {
  const SoftmaxRows rows = qlinear_softmax_rows(node, inputs[0].info.shape);
  KernelChoice choice;
  choice.kernel = with_int8_type(outputs[0].dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<QLinearSoftmaxKernel<decltype(t)>>(rows, present(inputs, 4));
  });
  choice.algorithm = "exp table, float32 sums";
  return choice;
}

}  // namespace

void register_cpu_qlinear_pool_softmax_kernels(KernelRegistry& r) {
  r.add(op_key(kMicrosoftDomain, "QLinearAveragePool"), plan_qlinear_average_pool).with_dtypes(int8_types());
  r.add(op_key(kMicrosoftDomain, "QLinearSoftmax"), plan_qlinear_softmax).with_dtypes(int8_types());
}

}  // namespace dnnx
