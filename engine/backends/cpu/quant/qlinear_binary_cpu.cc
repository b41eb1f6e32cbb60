// com.microsoft's QLinearAdd and QLinearMul on the CPU (ops/quant/qlinear_binary.cc has their
// meaning): A minus its zero point, broadcast to C's shape, into an int32 workspace; then one
// broadcast walk over B computes C. MLAS rounds these two after adding C's zero point.
#include "backends/cpu/elementwise/broadcast_walk.h"
#include "backends/cpu/quant/int_gemm_cpu.h"
#include "backends/cpu/quant/quant_codec.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <class T, bool Multiply>
class QLinearBinaryKernel final : public Kernel {
 public:
  QLinearBinaryKernel(BroadcastWalk a, BroadcastWalk b, bool a_zp, bool b_zp, bool c_zp)
      : a_(std::move(a)), b_(std::move(b)), a_zp_(a_zp), b_zp_(b_zp), c_zp_(c_zp) {}

  void run(const KernelArgs& args) const override {
    const T* a = args.in<T>(0);
    const T* b = args.in<T>(3);
    const int32_t za = a_zp_ ? args.in<T>(2)[0] : 0, zb = b_zp_ ? args.in<T>(5)[0] : 0;
    const T zc = c_zp_ ? args.in<T>(7)[0] : T{};
    const float sa = args.in<float>(1)[0], sb = args.in<float>(4)[0], sc = args.in<float>(6)[0];
    auto* da = static_cast<int32_t*>(args.workspace);
    T* c = args.out<T>(0);
    for_each_run(a_, [&](int64_t out, int64_t in, int64_t count, int64_t step) {
      for (int64_t k = 0; k < count; ++k) da[out + k] = static_cast<int32_t>(a[in + k * step]) - za;
    });
    const float ratio = sa * sb / sc;
    for_each_run(b_, [&](int64_t out, int64_t in, int64_t count, int64_t step) {
      for (int64_t k = 0; k < count; ++k) {
        const int32_t db = static_cast<int32_t>(b[in + k * step]) - zb;
        float v;
        if constexpr (Multiply) v = static_cast<float>(da[out + k] * db) * ratio;
        else v = (sa * static_cast<float>(da[out + k]) + sb * static_cast<float>(db)) / sc;
        c[out + k] = IntCodec<T>::quantize_offset_first(v, zc);
      }
    });
  }

 private:
  BroadcastWalk a_, b_;
  bool a_zp_, b_zp_, c_zp_;
};

bool present(const std::vector<ValueInfo>& inputs, size_t i) { return i < inputs.size() && inputs[i].present; }

template <bool Multiply>
KernelChoice plan_qlinear_binary(const Node&, const std::vector<ValueInfo>& inputs,
                                 const std::vector<TensorInfo>& outputs) {
  const Shape& out = outputs[0].shape;
  KernelChoice choice;
  choice.workspace_bytes = static_cast<size_t>(numel(out)) * sizeof(int32_t);
  choice.kernel = with_int8_type(outputs[0].dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<QLinearBinaryKernel<decltype(t), Multiply>>(
        broadcast_walk(inputs[0].info.shape, out), broadcast_walk(inputs[3].info.shape, out), present(inputs, 2),
        present(inputs, 5), present(inputs, 7));
  });
  choice.algorithm = Multiply ? "int32 product, float32 requantize" : "float32 sum, requantize";
  return choice;
}

}  // namespace

void register_cpu_qlinear_binary_kernels(KernelRegistry& r) {
  r.add(op_key(kMicrosoftDomain, "QLinearAdd"), plan_qlinear_binary<false>).with_dtypes(int8_types());
  r.add(op_key(kMicrosoftDomain, "QLinearMul"), plan_qlinear_binary<true>).with_dtypes(int8_types());
}

}  // namespace dnnx
