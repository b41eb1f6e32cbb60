// MatMulInteger and QLinearMatMul (ops/quant/matmul_integer.cc has their meaning) and
// com.microsoft's MatMulIntegerToFloat and DynamicQuantizeMatMul (ops/quant/
// matmul_integer_to_float.cc) on the CPU: per output matrix, A and B minus their zero points into
// int16 (B once while its matrix repeats), the int32 product (Note [int8 gemm]), then the op's
// epilogue: the sums themselves (MatMulInteger), requantized (QLinearMatMul, Note
// [requantization] in quant_codec.h) or scaled to float32 with the bias (the com.microsoft ones;
// DynamicQuantizeMatMul first quantizes its float A as DynamicQuantizeLinear does). A constant B
// (the weights, as quantize_dynamic writes them) is packed once at plan time for the int8 GEMM of
// int8_gemm_cpu.h (VNNI / AVX2) instead.
#include <algorithm>
#include <optional>
#include <type_traits>

#include "backends/cpu/quant/dynamic_quantize_cpu.h"
#include "backends/cpu/quant/int8_gemm_cpu.h"
#include "backends/cpu/quant/int_gemm_cpu.h"
#include "backends/cpu/quant/quant_codec.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

// Which inputs hold what (-1: the op has none, or it is omitted).
struct Slots {
  int a = 0, b = 1, a_zp = -1, b_zp = -1;
  int a_scale = -1, b_scale = -1, y_scale = -1, y_zp = -1;  // QLinearMatMul (the scales also the float ones)
  int bias = -1;                                             // the float-output ops
};

struct IntMatMulPlan {
  MatMulGeometry g;
  std::vector<std::pair<int64_t, int64_t>> offsets;  // (A, B) element offsets per output matrix
  ParamSpread a_zp = ParamSpread::PerTensor, b_zp = ParamSpread::PerTensor, b_scale = ParamSpread::PerTensor;
  Slots slots;
  int workers = 1;
  int64_t dynamic_a = 0;  // DynamicQuantizeMatMul: A's element count, quantized to uint8 first; 0 otherwise
  // B a constant matrix (the usual case: the weights): packed once for the int8 GEMM of Note [int8
  // gemm paths] as its W = B^T (B's columns its rows), A read transposed as its B; empty otherwise.
  std::optional<Int8Weights> packed;

  size_t a16_elems() const { return static_cast<size_t>(g.m * g.k); }
  size_t b16_elems() const { return static_cast<size_t>(g.k * g.n); }
  size_t c32_offset() const { return ((a16_elems() + b16_elems()) * sizeof(int16_t) + 63) / 64 * 64; }
  size_t scratch_offset() const {
    return (c32_offset() + static_cast<size_t>(g.m * g.n) * sizeof(int32_t) + static_cast<size_t>(dynamic_a) + 63) / 64 * 64;
  }
  size_t workspace_bytes() const {
    return scratch_offset() + (packed ? int8_gemm_scratch_bytes(*packed, g.m) + 64 : 0);
  }
};

// The index of B's matrix (in B's own batch) at element offset `b_offset`.
int64_t b_matrix(const IntMatMulPlan& p, int64_t b_offset) {
  const int64_t size = p.g.k * p.g.n;
  return size == 0 ? 0 : b_offset / size;
}

// TY int32_t: MatMulInteger's sums; int8_t/uint8_t: QLinearMatMul's requantized output.
template <class TA, class TB, class TY>
class IntMatMulKernel final : public Kernel {
 public:
  explicit IntMatMulKernel(IntMatMulPlan plan) : p_(std::move(plan)) {}

  void run(const KernelArgs& args) const override {
    const Slots& s = p_.slots;
    const MatMulGeometry& g = p_.g;
    auto* base = static_cast<uint8_t*>(args.workspace);
    auto* a16 = reinterpret_cast<int16_t*>(base);
    int16_t* b16 = a16 + p_.a16_elems();
    auto* c32 = reinterpret_cast<int32_t*>(base + p_.c32_offset());
    const TA* a = nullptr;
    const TA* a_zp = s.a_zp >= 0 ? args.in<TA>(s.a_zp) : nullptr;
    float a_scale = s.a_scale >= 0 ? args.in<float>(s.a_scale)[0] : 1.0f;
    TA dynamic_zp{};
    if (p_.dynamic_a) {  // TA is uint8_t here
      auto* quantized = reinterpret_cast<uint8_t*>(c32 + g.m * g.n);
      const DynamicQuantParams q = dynamic_quant_params(args.in<float>(s.a), p_.dynamic_a);
      dynamic_quantize(args.in<float>(s.a), p_.dynamic_a, q, quantized);
      a = reinterpret_cast<const TA*>(quantized);
      dynamic_zp = static_cast<TA>(q.zero_point);
      a_zp = &dynamic_zp;
      a_scale = q.scale;
    } else {
      a = args.in<TA>(s.a);
    }
    const TB* b = args.in<TB>(s.b);
    const TB* b_zp = s.b_zp >= 0 ? args.in<TB>(s.b_zp) : nullptr;
    TY* y = args.out<TY>(0);
    int64_t converted_b = -1;
    for (size_t t = 0; t < p_.offsets.size(); ++t) {
      const auto [ao, bo] = p_.offsets[t];
      const int64_t matrix = b_matrix(p_, bo);
      if (p_.packed) {  // C^T = W x A^T: the GEMM's row j is C's column j
        const int64_t n = g.n;
        int8_gemm_tiles(*p_.packed, a + ao, std::is_same_v<TA, int8_t>, a_zp ? static_cast<int32_t>(a_zp[0]) : 0, g.m, 1,
                        g.k,
                        [&](int64_t m0, int64_t rows, int64_t j0, int64_t cnt, const int32_t* tile, int64_t ld) {
                          for (int64_t r = 0; r < rows; ++r) {
                            for (int64_t i = 0; i < cnt; ++i) c32[(j0 + i) * n + m0 + r] = tile[r * ld + i];
                          }
                        },
                        base + p_.scratch_offset(), p_.workers);
      } else {
        minus_zero_point(a + ao, g.m, g.k, g.k, a_zp, p_.a_zp, a16);
        if (bo != converted_b) {
          const TB* zp = b_zp && p_.b_zp == ParamSpread::PerBatchColumn ? b_zp + matrix * g.n : b_zp;
          minus_zero_point(b + bo, g.k, g.n, g.n, zp, p_.b_zp, b16);
          converted_b = bo;
        }
        gemm_s16(g.m, g.n, g.k, a16, b16, c32, p_.workers);
      }
      TY* out = y + static_cast<int64_t>(t) * g.m * g.n;
      if constexpr (std::is_same_v<TY, int32_t>) {
        std::copy(c32, c32 + g.m * g.n, out);
      } else if constexpr (std::is_same_v<TY, float>) {
        to_float(args, matrix, a_scale, c32, out);
      } else {
        requantize(args, matrix, c32, out);
      }
    }
  }

 private:
  // y = saturate(round(sum * a_scale * b_scale / y_scale) + y_zero_point), the multiplier per
  // b_scale entry as onnxruntime computes it (a_scale * b_scale[i] / y_scale, float32).
  void requantize(const KernelArgs& args, int64_t matrix, const int32_t* c32, TY* out) const {
    const Slots& s = p_.slots;
    const int64_t n = p_.g.n;
    const float a_scale = args.in<float>(s.a_scale)[0], y_scale = args.in<float>(s.y_scale)[0];
    const float* b_scale = args.in<float>(s.b_scale);
    if (p_.b_scale == ParamSpread::PerBatchColumn) b_scale += matrix * n;
    const TY y_zp = args.in<TY>(s.y_zp)[0];
    const bool per_column = p_.b_scale != ParamSpread::PerTensor;
    for (int64_t i = 0; i < p_.g.m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const float multiplier = a_scale * b_scale[per_column ? j : 0] / y_scale;
        out[i * n + j] = IntCodec<TY>::quantize(static_cast<float>(c32[i * n + j]) * multiplier, y_zp, DType::Float32, true);
      }
    }
  }

  // y = sum * (a_scale * b_scale) + bias, the multiplier per b_scale entry as onnxruntime's.
  void to_float(const KernelArgs& args, int64_t matrix, float a_scale, const int32_t* c32, float* out) const {
    const Slots& s = p_.slots;
    const int64_t n = p_.g.n;
    const float* b_scale = args.in<float>(s.b_scale);
    if (p_.b_scale == ParamSpread::PerBatchColumn) b_scale += matrix * n;
    const float* bias = s.bias >= 0 ? args.in<float>(s.bias) : nullptr;
    const bool per_column = p_.b_scale != ParamSpread::PerTensor;
    for (int64_t i = 0; i < p_.g.m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const float multiplier = a_scale * b_scale[per_column ? j : 0];
        out[i * n + j] = static_cast<float>(c32[i * n + j]) * multiplier + (bias ? bias[j] : 0.0f);
      }
    }
  }

  IntMatMulPlan p_;
};

bool present(const std::vector<ValueInfo>& inputs, size_t i) { return i < inputs.size() && inputs[i].present; }

// p.packed where B (and its zero point) are constants of one matrix and A's zero point is one value.
void pack_constant_b(IntMatMulPlan& p, const std::vector<ValueInfo>& inputs) {
  const int b = p.slots.b, zp = p.slots.b_zp;
  if (!present(inputs, static_cast<size_t>(b)) || !inputs[static_cast<size_t>(b)].constant || p.a_zp != ParamSpread::PerTensor ||
      inputs[static_cast<size_t>(b)].info.shape.size() != 2) {
    return;
  }
  const void* zp_data = nullptr;
  bool per_column = false;
  if (zp >= 0) {
    const ValueInfo& z = inputs[static_cast<size_t>(zp)];
    if (!z.constant || (p.b_zp != ParamSpread::PerTensor && p.b_zp != ParamSpread::PerBatchColumn &&
                        p.b_zp != ParamSpread::PerColumn)) {
      return;
    }
    zp_data = z.constant->data.data();
    per_column = p.b_zp != ParamSpread::PerTensor;
  }
  const ConstTensor& w = *inputs[static_cast<size_t>(b)].constant;
  // W[j, k] = B[k, j]: row j at B + j, k steps of n
  p.packed = pack_int8_weights(w.data.data(), w.info.dtype == DType::Int8, p.g.n, p.g.k, 1, p.g.n, zp_data, per_column,
                               default_int8_path());
}

template <class TY>
KernelChoice make_choice(IntMatMulPlan plan, DType ta, DType tb, const std::vector<ValueInfo>& inputs) {
  pack_constant_b(plan, inputs);
  const std::string path = plan.packed ? std::string(" (") + int8_path_name(plan.packed->path) + ")" : "";
  KernelChoice choice;
  choice.workspace_bytes = plan.workspace_bytes();
  choice.kernel = with_int8_type(ta, [&](auto a) {
    return with_int8_type(tb, [&](auto b) -> std::unique_ptr<Kernel> {
      return std::make_unique<IntMatMulKernel<decltype(a), decltype(b), TY>>(plan);
    });
  });
  choice.algorithm = with_threads(std::string(dtype_name(ta)) + "x" + dtype_name(tb) + " gemm" + path, plan.workers);
  choice.math = "int8, int32 accumulation";
  return choice;
}

IntMatMulPlan base_plan(const Node& node, const Shape& a, const Shape& b) {
  IntMatMulPlan p;
  p.g = matmul_geometry(node, a, b);
  p.offsets = matmul_batch_offsets(p.g);
  p.workers = plan_workers(p.g.m, p.g.n * p.g.k);
  return p;
}

KernelChoice plan_matmul_integer(const Node& node, const std::vector<ValueInfo>& inputs,
                                 const std::vector<TensorInfo>&) {
  IntMatMulPlan p = base_plan(node, inputs[0].info.shape, inputs[1].info.shape);
  if (present(inputs, 2)) {
    p.slots.a_zp = 2;
    p.a_zp = a_param_spread(node, p.g, inputs[2].info.shape, "a_zero_point", true);
  }
  if (present(inputs, 3)) {
    p.slots.b_zp = 3;
    p.b_zp = b_param_spread(node, p.g, inputs[1].info.shape, inputs[3].info.shape, "b_zero_point");
  }
  return make_choice<int32_t>(std::move(p), inputs[0].info.dtype, inputs[1].info.dtype, inputs);
}

KernelChoice plan_qlinear_matmul(const Node& node, const std::vector<ValueInfo>& inputs,
                                 const std::vector<TensorInfo>& outputs) {
  const Shape& b = inputs[3].info.shape;
  IntMatMulPlan p = base_plan(node, inputs[0].info.shape, b);
  p.slots = Slots{0, 3, 2, 5, 1, 4, 6, 7};
  p.b_zp = b_param_spread(node, p.g, b, inputs[5].info.shape, "b_zero_point");
  p.b_scale = b_param_spread(node, p.g, b, inputs[4].info.shape, "b_scale");
  return with_int8_type(outputs[0].dtype, [&](auto y) {
    return make_choice<decltype(y)>(std::move(p), inputs[0].info.dtype, inputs[3].info.dtype, inputs);
  });
}

// com.microsoft's MatMulIntegerToFloat: A, B, a_scale, b_scale, a_zero_point?, b_zero_point?, bias?
KernelChoice plan_matmul_integer_to_float(const Node& node, const std::vector<ValueInfo>& inputs,
                                          const std::vector<TensorInfo>&) {
  const Shape& b = inputs[1].info.shape;
  IntMatMulPlan p = base_plan(node, inputs[0].info.shape, b);
  p.slots = Slots{0, 1, present(inputs, 4) ? 4 : -1, present(inputs, 5) ? 5 : -1, 2, 3, -1, -1,
                  present(inputs, 6) ? 6 : -1};
  if (present(inputs, 5)) p.b_zp = b_param_spread(node, p.g, b, inputs[5].info.shape, "b_zero_point");
  p.b_scale = b_param_spread(node, p.g, b, inputs[3].info.shape, "b_scale");
  return make_choice<float>(std::move(p), inputs[0].info.dtype, inputs[1].info.dtype, inputs);
}

// com.microsoft's DynamicQuantizeMatMul: A (float32), B, b_scale, b_zero_point?, bias?
KernelChoice plan_dynamic_quantize_matmul(const Node& node, const std::vector<ValueInfo>& inputs,
                                          const std::vector<TensorInfo>&) {
  const Shape& b = inputs[1].info.shape;
  IntMatMulPlan p = base_plan(node, inputs[0].info.shape, b);
  p.slots = Slots{0, 1, -1, present(inputs, 3) ? 3 : -1, -1, 2, -1, -1, present(inputs, 4) ? 4 : -1};
  p.dynamic_a = numel(inputs[0].info.shape);
  if (present(inputs, 3)) p.b_zp = b_param_spread(node, p.g, b, inputs[3].info.shape, "b_zero_point");
  p.b_scale = b_param_spread(node, p.g, b, inputs[2].info.shape, "b_scale");
  KernelChoice choice = make_choice<float>(std::move(p), DType::UInt8, inputs[1].info.dtype, inputs);
  choice.algorithm = "dynamic uint8 quantize, " + choice.algorithm;
  return choice;
}

}  // namespace

void register_cpu_matmul_integer_kernels(KernelRegistry& r) {
  r.add("MatMulInteger", plan_matmul_integer).with_dtypes(int8_types());
  r.add("QLinearMatMul", plan_qlinear_matmul).with_dtypes(int8_types());
  r.add(op_key(kMicrosoftDomain, "MatMulIntegerToFloat"), plan_matmul_integer_to_float).with_dtypes(int8_types());
  r.add(op_key(kMicrosoftDomain, "DynamicQuantizeMatMul"), plan_dynamic_quantize_matmul).with_dtypes(int8_types());
}

}  // namespace dnnx
