// com.microsoft's QLinearAdd and QLinearMul on the CPU (ops/quant/qlinear_binary.cc has their
// meaning): where A or B has C's shape (the usual case: a residual join, an SE block's gate times
// its features), it is read in place and the other walked along it in vectorized runs; otherwise
// A minus its zero point, broadcast to C's shape, goes into an int32 workspace and one broadcast
// walk over B computes C. MLAS rounds these two after adding C's zero point.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cpu/elementwise/broadcast_walk.h"
#include "backends/cpu/quant/int_gemm_cpu.h"
#include "backends/cpu/quant/quant_codec.h"
#include "runtime/kernel_registry.h"

// No FMA contraction: the AVX-512 and AVX2 forms below must round the product and the sum apart,
// as the scalar form and MLAS do (GCC would fuse them under the AVX-512 target).
#pragma GCC optimize("fp-contract=off")

namespace dnnx {

namespace {

// c[k] for k < n, with a[k] and b[k * b_step] (b_step 0: one value of b for the run), the
// arithmetic of the file comment; written so the compiler vectorizes it (nearbyint becomes a
// vector round under the AVX targets: the libm call per element took most of the time).
template <class T, bool Multiply>
inline __attribute__((always_inline)) void binary_run_body(const T* a, const T* b, int64_t b_step, T* c, int64_t n,
                                                           int32_t za, int32_t zb, float sa, float sb, float sc,
                                                           float ratio, float zc) {
  constexpr float lo = static_cast<float>(std::numeric_limits<T>::min()), hi = static_cast<float>(std::numeric_limits<T>::max());
  auto one = [&](int32_t da, int32_t db) {
    float v;
    if constexpr (Multiply) v = static_cast<float>(da * db) * ratio;
    else v = (sa * static_cast<float>(da) + sb * static_cast<float>(db)) / sc;
    return static_cast<T>(std::min(std::max(std::nearbyint(v + zc), lo), hi));  // IntCodec::quantize_offset_first
  };
  if (b_step == 0) {
    const int32_t db = static_cast<int32_t>(b[0]) - zb;
    for (int64_t k = 0; k < n; ++k) c[k] = one(static_cast<int32_t>(a[k]) - za, db);
  } else if (b_step == 1) {
    for (int64_t k = 0; k < n; ++k) c[k] = one(static_cast<int32_t>(a[k]) - za, static_cast<int32_t>(b[k]) - zb);
  } else {
    for (int64_t k = 0; k < n; ++k) c[k] = one(static_cast<int32_t>(a[k]) - za, static_cast<int32_t>(b[k * b_step]) - zb);
  }
}

template <class T, bool Multiply>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void binary_run_avx512(const T* a, const T* b, int64_t b_step, T* c,
                                                                            int64_t n, int32_t za, int32_t zb, float sa,
                                                                            float sb, float sc, float ratio, float zc) {
  binary_run_body<T, Multiply>(a, b, b_step, c, n, za, zb, sa, sb, sc, ratio, zc);
}

template <class T, bool Multiply>
__attribute__((target("avx2"))) void binary_run_avx2(const T* a, const T* b, int64_t b_step, T* c, int64_t n, int32_t za,
                                                     int32_t zb, float sa, float sb, float sc, float ratio, float zc) {
  binary_run_body<T, Multiply>(a, b, b_step, c, n, za, zb, sa, sb, sc, ratio, zc);
}

template <class T, bool Multiply>
void binary_run(const T* a, const T* b, int64_t b_step, T* c, int64_t n, int32_t za, int32_t zb, float sa, float sb,
                float sc, float ratio, float zc) {
  static const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                             __builtin_cpu_supports("avx512vl");
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx512) binary_run_avx512<T, Multiply>(a, b, b_step, c, n, za, zb, sa, sb, sc, ratio, zc);
  else if (avx2) binary_run_avx2<T, Multiply>(a, b, b_step, c, n, za, zb, sa, sb, sc, ratio, zc);
  else binary_run_body<T, Multiply>(a, b, b_step, c, n, za, zb, sa, sb, sc, ratio, zc);
}

// One operand of C's own shape (`full`: 0 for A, 1 for B; -1: neither) is read in place and the
// other walked along it in runs; otherwise A is first broadcast into an int32 workspace.
template <class T, bool Multiply>
class QLinearBinaryKernel final : public Kernel {
 public:
  QLinearBinaryKernel(BroadcastWalk a, BroadcastWalk b, bool a_zp, bool b_zp, bool c_zp, int full)
      : a_(std::move(a)), b_(std::move(b)), a_zp_(a_zp), b_zp_(b_zp), c_zp_(c_zp), full_(full) {}

  void run(const KernelArgs& args) const override {
    const T* a = args.in<T>(0);
    const T* b = args.in<T>(3);
    const int32_t za = a_zp_ ? args.in<T>(2)[0] : 0, zb = b_zp_ ? args.in<T>(5)[0] : 0;
    const T zc = c_zp_ ? args.in<T>(7)[0] : T{};
    const float sa = args.in<float>(1)[0], sb = args.in<float>(4)[0], sc = args.in<float>(6)[0];
    const float ratio = sa * sb / sc;
    T* c = args.out<T>(0);
    if (full_ >= 0) {  // the sum and product are symmetric: the full operand goes first
      const bool a_full = full_ == 0;
      const T* p = a_full ? a : b;
      const T* o = a_full ? b : a;
      const int32_t zp = a_full ? za : zb, zo = a_full ? zb : za;
      const float sp = a_full ? sa : sb, so = a_full ? sb : sa;
      for_each_run(a_full ? b_ : a_, [&](int64_t out, int64_t in, int64_t count, int64_t step) {
        binary_run<T, Multiply>(p + out, o + in, step, c + out, count, zp, zo, sp, so, sc, ratio, static_cast<float>(zc));
      });
      return;
    }
    auto* da = static_cast<int32_t*>(args.workspace);
    for_each_run(a_, [&](int64_t out, int64_t in, int64_t count, int64_t step) {
      for (int64_t k = 0; k < count; ++k) da[out + k] = static_cast<int32_t>(a[in + k * step]) - za;
    });
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
  int full_;
};

bool present(const std::vector<ValueInfo>& inputs, size_t i) { return i < inputs.size() && inputs[i].present; }

template <bool Multiply>
KernelChoice plan_qlinear_binary(const Node&, const std::vector<ValueInfo>& inputs,
                                 const std::vector<TensorInfo>& outputs) {
  const Shape& out = outputs[0].shape;
  KernelChoice choice;
  choice.workspace_bytes = static_cast<size_t>(numel(out)) * sizeof(int32_t);
  const int full = inputs[0].info.shape == out ? 0 : inputs[3].info.shape == out ? 1 : -1;
  if (full >= 0) choice.workspace_bytes = 0;
  choice.kernel = with_int8_type(outputs[0].dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<QLinearBinaryKernel<decltype(t), Multiply>>(
        broadcast_walk(inputs[0].info.shape, out), broadcast_walk(inputs[3].info.shape, out), present(inputs, 2),
        present(inputs, 5), present(inputs, 7), full);
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
