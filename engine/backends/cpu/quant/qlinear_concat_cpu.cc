// com.microsoft's QLinearConcat on the CPU (ops/quant/qlinear_concat.cc has its meaning): each
// input's rows along the axis copied, or mapped through its 256-entry requantizing table.
#include <cstring>

#include "backends/cpu/quant/int_gemm_cpu.h"
#include "backends/cpu/quant/quant_codec.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <class T>
class QLinearConcatKernel final : public Kernel {
 public:
  // pitches[i]: input i's elements per outer index (its axis dim times the inner size).
  QLinearConcatKernel(int64_t outer, std::vector<int64_t> pitches) : outer_(outer), pitches_(std::move(pitches)) {}

  void run(const KernelArgs& args) const override {
    const float y_scale = args.in<float>(0)[0];
    const T y_zp = args.in<T>(1)[0];
    int64_t out_pitch = 0;
    for (int64_t p : pitches_) out_pitch += p;
    T* y = args.out<T>(0);
    int64_t offset = 0;
    for (size_t i = 0; i < pitches_.size(); ++i) {
      const T* x = args.in<T>(2 + 3 * i);
      const float x_scale = args.in<float>(3 + 3 * i)[0];
      const T x_zp = args.in<T>(4 + 3 * i)[0];
      const int64_t pitch = pitches_[i];
      const bool copy = x_scale == y_scale && x_zp == y_zp;
      T table[256];
      if (!copy) {
        for (int v = 0; v < 256; ++v) {
          const T q = static_cast<T>(static_cast<uint8_t>(v));
          const float f = x_scale * static_cast<float>(static_cast<int32_t>(q) - static_cast<int32_t>(x_zp));
          table[v] = IntCodec<T>::quantize(f / y_scale, y_zp, DType::Float32, true);
        }
      }
      for (int64_t o = 0; o < outer_; ++o) {
        const T* src = x + o * pitch;
        T* dst = y + o * out_pitch + offset;
        if (copy) {
          if (pitch) std::memcpy(dst, src, static_cast<size_t>(pitch) * sizeof(T));
        } else {
          for (int64_t k = 0; k < pitch; ++k) dst[k] = table[static_cast<uint8_t>(src[k])];
        }
      }
      offset += pitch;
    }
  }

 private:
  int64_t outer_;
  std::vector<int64_t> pitches_;
};

KernelChoice plan_qlinear_concat(const Node& node, const std::vector<ValueInfo>& inputs,
                                 const std::vector<TensorInfo>& outputs) {
  const Shape& y = outputs[0].shape;
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), static_cast<int64_t>(y.size()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(y.size()); ++d) {
    if (d < axis) outer *= y[d];
    if (d > axis) inner *= y[d];
  }
  std::vector<int64_t> pitches;
  for (size_t i = 2; i < inputs.size(); i += 3) pitches.push_back(inputs[i].info.shape[axis] * inner);
  KernelChoice choice;
  choice.kernel = with_int8_type(outputs[0].dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<QLinearConcatKernel<decltype(t)>>(outer, pitches);
  });
  choice.algorithm = "row copy / 256-entry table";
  return choice;
}

}  // namespace

void register_cpu_qlinear_concat_kernels(KernelRegistry& r) {
  r.add(op_key(kMicrosoftDomain, "QLinearConcat"), plan_qlinear_concat).with_dtypes(int8_types());
}

}  // namespace dnnx
