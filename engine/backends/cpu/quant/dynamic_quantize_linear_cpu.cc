// DynamicQuantizeLinear on the CPU (ops/quant/dynamic_quantize_linear.cc has its meaning): one
// pass for x's range, one to quantize. The parameters' arithmetic is onnxruntime's, in float32.
#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "backends/cpu/quant/dynamic_quantize_cpu.h"
#include "backends/cpu/quant/quant_codec.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

// Note [dynamic quantize in registers]: q_dyn_bert's 8 DynamicQuantizeLinears of [1, 32, 128] and
// [1, 32, 512] took 127 of its 256 us (one thread): a scalar min/max and a per-element codec call.
// The AVX-512 forms give the same bits: min(x, lo) keeps lo where x is NaN as std::min(lo, x)
// does; the quantize divides (as the scalar form, and MLAS, do), rounds half to even, adds the
// zero point, clamps and maps NaN to 0 (IntCodec::saturate).
__attribute__((target("avx512f"))) void min_max_avx512(const float* x, int64_t n, float& lo, float& hi) {
  __m512 l = _mm512_set1_ps(lo), h = _mm512_set1_ps(hi);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    l = _mm512_min_ps(v, l);
    h = _mm512_max_ps(v, h);
  }
  lo = std::min(lo, _mm512_reduce_min_ps(l));
  hi = std::max(hi, _mm512_reduce_max_ps(h));
  for (; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
}

__attribute__((target("avx512f"))) int64_t quantize_avx512(const float* x, int64_t n, const DynamicQuantParams& p,
                                                           uint8_t* y) {
  const __m512 s = _mm512_set1_ps(p.scale), zp = _mm512_set1_ps(static_cast<float>(p.zero_point));
  const __m512 top = _mm512_set1_ps(255.0f), zero = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 r = _mm512_add_ps(
        _mm512_roundscale_ps(_mm512_div_ps(_mm512_loadu_ps(x + i), s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
    const __mmask16 number = _mm512_cmp_ps_mask(r, r, _CMP_ORD_Q);
    const __m512i q = _mm512_maskz_mov_epi32(number, _mm512_cvttps_epi32(_mm512_min_ps(_mm512_max_ps(r, zero), top)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm512_cvtepi32_epi8(q));
  }
  return i;
}

const bool kAvx512 = __builtin_cpu_supports("avx512f");

}  // namespace

DynamicQuantParams dynamic_quant_params(const float* x, int64_t n) {
  float lo = std::numeric_limits<float>::max(), hi = std::numeric_limits<float>::lowest();
  if (kAvx512) {
    min_max_avx512(x, n, lo, hi);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
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
  const int64_t done = kAvx512 ? quantize_avx512(x, n, p, y) : 0;
  for (int64_t i = done; i < n; ++i) {
    y[i] = IntCodec<uint8_t>::quantize(x[i] / p.scale, p.zero_point, DType::UInt8, true);
  }
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
