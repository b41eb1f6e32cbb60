// com.microsoft's QGemm on the CPU (ops/quant/qgemm.cc has its meaning): A and B minus their
// zero points into int16 (transposed as transA/transB say), the int32 product (Note [int8
// gemm]), C's bias, then requantized or scaled to float32. With constant weights (alpha 1, no
// transA, C per column) it runs Int8Gemm's kernel instead (qdq_int8_cpu.h).
#include "backends/cpu/quant/int_gemm_cpu.h"
#include "backends/cpu/quant/qdq_int8_cpu.h"
#include "backends/cpu/quant/quant_codec.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "ops/quant/qgemm.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

// dst[r, c] = src[r * row_step + c * col_step] - zp[per_column ? c : 0], rows x cols.
template <class T>
void strided_minus_zero_point(const T* src, int64_t rows, int64_t cols, int64_t row_step, int64_t col_step,
                              const T* zp, bool per_column, int16_t* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int32_t z = zp[per_column ? c : 0];
      dst[r * cols + c] = static_cast<int16_t>(static_cast<int32_t>(src[r * row_step + c * col_step]) - z);
    }
  }
}

// TY float: Y = sum * alpha * a_scale * b_scale; int8_t/uint8_t: requantized.
template <class TA, class TB, class TY>
class QGemmKernel final : public Kernel {
 public:
  QGemmKernel(QGemmGeometry g, bool bias, bool b_per_column, bool b_scale_per_column, int workers)
      : g_(g), bias_(bias), b_per_column_(b_per_column), b_scale_per_column_(b_scale_per_column), workers_(workers) {}

  void run(const KernelArgs& args) const override {
    const int64_t m = g_.m, n = g_.n, k = g_.k;
    auto* a16 = static_cast<int16_t*>(args.workspace);
    int16_t* b16 = a16 + m * k;
    auto address = reinterpret_cast<uintptr_t>(b16 + k * n);
    auto* c32 = reinterpret_cast<int32_t*>((address + 63) & ~uintptr_t{63});
    strided_minus_zero_point(args.in<TA>(0), m, k, g_.trans_a ? 1 : k, g_.trans_a ? m : 1, args.in<TA>(2), false, a16);
    strided_minus_zero_point(args.in<TB>(3), k, n, g_.trans_b ? 1 : n, g_.trans_b ? k : 1, args.in<TB>(5),
                             b_per_column_, b16);
    gemm_s16(m, n, k, a16, b16, c32, workers_);
    const int32_t* c = bias_ ? args.in<int32_t>(6) : nullptr;
    const float a_scale = args.in<float>(1)[0];
    const float* b_scale = args.in<float>(4);
    TY* y = args.out<TY>(0);
    float y_scale = 1.0f;
    TY y_zp{};
    if constexpr (!std::is_same_v<TY, float>) {
      y_scale = args.in<float>(7)[0];
      y_zp = args.in<TY>(8)[0];
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const int32_t sum = c32[i * n + j] + (c ? c[i * g_.c_row + j * g_.c_col] : 0);
        float multiplier = g_.alpha * a_scale * b_scale[b_scale_per_column_ ? j : 0];
        if constexpr (std::is_same_v<TY, float>) {
          y[i * n + j] = static_cast<float>(sum) * multiplier;
        } else {
          multiplier /= y_scale;
          y[i * n + j] = IntCodec<TY>::quantize(static_cast<float>(sum) * multiplier, y_zp, DType::Float32, true);
        }
      }
    }
  }

 private:
  QGemmGeometry g_;
  bool bias_, b_per_column_, b_scale_per_column_;
  int workers_;
};

bool present(const std::vector<ValueInfo>& inputs, size_t i) { return i < inputs.size() && inputs[i].present; }
bool per_column(const Shape& s) { return s.size() == 1 && s[0] != 1; }

template <class TY>
std::unique_ptr<Kernel> make_kernel(DType ta, DType tb, const QGemmGeometry& g, bool bias, bool zp_col, bool scale_col,
                                    int workers) {
  return with_int8_type(ta, [&](auto a) {
    return with_int8_type(tb, [&](auto b) -> std::unique_ptr<Kernel> {
      return std::make_unique<QGemmKernel<decltype(a), decltype(b), TY>>(g, bias, zp_col, scale_col, workers);
    });
  });
}

KernelChoice plan_qgemm(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  // constant weights: the int8 layers' kernel (qdq_int8_cpu.h)
  if (std::optional<KernelChoice> fast = plan_qgemm_int8(node, inputs, outputs)) return std::move(*fast);
  const bool bias = present(inputs, 6);
  const QGemmGeometry g = qgemm_geometry(node, inputs[0].info.shape, inputs[3].info.shape,
                                         bias ? &inputs[6].info.shape : nullptr);
  const int workers = plan_workers(g.m, g.n * g.k);
  const bool zp_col = per_column(inputs[5].info.shape), scale_col = per_column(inputs[4].info.shape);
  const DType ta = inputs[0].info.dtype, tb = inputs[3].info.dtype;
  KernelChoice choice;
  choice.workspace_bytes = static_cast<size_t>(g.m * g.k + g.k * g.n) * sizeof(int16_t) + 64 +
                           static_cast<size_t>(g.m * g.n) * sizeof(int32_t);
  if (outputs[0].dtype == DType::Float32) {
    choice.kernel = make_kernel<float>(ta, tb, g, bias, zp_col, scale_col, workers);
  } else {
    choice.kernel = with_int8_type(outputs[0].dtype, [&](auto y) {
      return make_kernel<decltype(y)>(ta, tb, g, bias, zp_col, scale_col, workers);
    });
  }
  choice.algorithm = with_threads(std::string(dtype_name(ta)) + "x" + dtype_name(tb) + " gemm", workers);
  choice.math = "int8, int32 accumulation";
  return choice;
}

}  // namespace

void register_cpu_qgemm_kernels(KernelRegistry& r) {
  r.add(op_key(kMicrosoftDomain, "QGemm"), plan_qgemm).with_dtypes(int8_types());
}

}  // namespace dnnx
