// QuantizeLinear and DequantizeLinear on the CPU (ops/quant/quantize_linear.cc has their
// meaning): one loop over x as [outer, axis_len, inner] (Note [quantization granularity]), the
// parameter entry of each element from the layout; the element step is the codec's
// (quant_codec.h). x, scale and y are float32 or int32 here: float16 and bfloat16 ones are
// widened at the kernel's edges (Note [cpu dtypes]), which is onnxruntime's float32 arithmetic.
#include <type_traits>

#include "backends/cpu/quant/quant_codec.h"
#include "backends/cpu/quant/quantize_bytes_cpu.h"
#include "backends/cpu/runtime/element_type.h"
#include "ops/quant/quant_layout.h"
#include "ops/quant/quantize_linear.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

// Calls body(index, param) for every element of x in order, with its parameter entry.
template <class Body>
void for_each_element(const QuantLayout& l, Body&& body) {
  int64_t index = 0;
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t a = 0; a < l.axis_len; ++a) {
      const int64_t first = l.index(o, a, 0);
      const int64_t step = l.granularity == QuantGranularity::Blocked ? 1 : 0;
      for (int64_t i = 0; i < l.inner; ++i, ++index) body(index, first + i * step);
    }
  }
}

template <class X, class Codec>
class QuantizeKernel final : public Kernel {
 public:
  QuantizeKernel(QuantLayout layout, DType type, bool saturate, bool has_zero_point)
      : layout_(layout), type_(type), saturate_(saturate), has_zero_point_(has_zero_point) {}
  void run(const KernelArgs& args) const override {
    using Q = typename Codec::Stored;
    const X* x = args.in<X>(0);
    const float* scale = args.in<float>(1);
    const Q* zp = has_zero_point_ ? args.in<Q>(2) : nullptr;
    Q* y = args.out<Q>(0);
    if constexpr (std::is_same_v<X, float> && (std::is_same_v<Codec, IntCodec<int8_t>> || std::is_same_v<Codec, IntCodec<uint8_t>>)) {
      if (layout_.granularity == QuantGranularity::PerTensor) {  // the common case, vectorized: quantize_bytes_cpu.h
        quantize_float_to_8bit(x, layout_.outer * layout_.axis_len * layout_.inner, scale[0], zp ? zp[0] : 0,
                               std::is_same_v<Codec, IntCodec<int8_t>>, y);
        return;
      }
    }
    for_each_element(layout_, [&](int64_t n, int64_t k) {
      y[n] = Codec::quantize(static_cast<float>(x[n]) / scale[k], zp ? zp[k] : Q{}, type_, saturate_);
    });
  }

 private:
  QuantLayout layout_;
  DType type_;
  bool saturate_, has_zero_point_;
};

// y[i] = float(x[i] - zp) * scale, 8-bit x (signed or not), one scale and zero point: the
// per-tensor DequantizeLinear of an activation, written so the compiler vectorizes it (the
// general walk below is a scalar loop: EfficientNet-B0's 1.5 ms against onnxruntime's 0.5).
// The same operations in the same order as the walk: the same bits.
inline __attribute__((always_inline)) void dequantize_bytes_body(const uint8_t* x, bool is_signed, int64_t n, int32_t zp,
                                                                 float scale, float* y) {
  if (is_signed) {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<int32_t>(static_cast<int8_t>(x[i])) - zp) * scale;
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zp) * scale;
  }
}
__attribute__((target("avx512f,avx512bw"))) void dequantize_bytes_avx512(const uint8_t* x, bool is_signed, int64_t n,
                                                                         int32_t zp, float scale, float* y) {
  dequantize_bytes_body(x, is_signed, n, zp, scale, y);
}
__attribute__((target("avx2"))) void dequantize_bytes_avx2(const uint8_t* x, bool is_signed, int64_t n, int32_t zp,
                                                           float scale, float* y) {
  dequantize_bytes_body(x, is_signed, n, zp, scale, y);
}
void dequantize_bytes(const uint8_t* x, bool is_signed, int64_t n, int32_t zp, float scale, float* y) {
  static const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx512) dequantize_bytes_avx512(x, is_signed, n, zp, scale, y);
  else if (avx2) dequantize_bytes_avx2(x, is_signed, n, zp, scale, y);
  else dequantize_bytes_body(x, is_signed, n, zp, scale, y);
}

template <class Codec>
class DequantizeKernel final : public Kernel {
 public:
  DequantizeKernel(QuantLayout layout, DType type, bool has_zero_point)
      : layout_(layout), type_(type), has_zero_point_(has_zero_point) {}
  void run(const KernelArgs& args) const override {
    using Q = typename Codec::Stored;
    const Q* x = args.in<Q>(0);
    const float* scale = args.in<float>(1);
    const Q* zp = has_zero_point_ ? args.in<Q>(2) : nullptr;
    float* y = args.out<float>(0);
    if constexpr (Codec::kInteger && (std::is_same_v<Q, uint8_t> || std::is_same_v<Q, int8_t>)) {
      if (layout_.granularity == QuantGranularity::PerTensor && (type_ == DType::UInt8 || type_ == DType::Int8)) {
        const auto* zb = reinterpret_cast<const uint8_t*>(zp);
        const int32_t z = !zb ? 0 : type_ == DType::Int8 ? static_cast<int8_t>(zb[0]) : static_cast<int32_t>(zb[0]);
        dequantize_bytes(reinterpret_cast<const uint8_t*>(x), type_ == DType::Int8,
                         layout_.outer * layout_.axis_len * layout_.inner, z, scale[0], y);
        return;
      }
    }
    for_each_element(layout_, [&](int64_t n, int64_t k) {
      if constexpr (Codec::kInteger) {  // onnxruntime: float(x - zero_point) * scale
        const int64_t z = zp ? Codec::read(zp[k], type_) : 0;
        y[n] = static_cast<float>(Codec::read(x[n], type_) - z) * scale[k];
      } else {
        const float z = zp ? Codec::to_float(zp[k], type_) : 0.0f;
        y[n] = (Codec::to_float(x[n], type_) - z) * scale[k];
      }
    });
  }

 private:
  QuantLayout layout_;
  DType type_;
  bool has_zero_point_;
};

bool has_zero_point(const std::vector<ValueInfo>& inputs) { return inputs.size() > 2 && inputs[2].present; }

QuantLayout layout_of(const Node& node, const std::vector<ValueInfo>& inputs) {
  const bool zp = has_zero_point(inputs);
  return quant_layout(node, inputs[0].info.shape, inputs[1].info.shape, zp ? &inputs[2].info.shape : nullptr);
}

void require_float32_scale(const Node& node, const std::vector<ValueInfo>& inputs) {
  if (inputs[1].info.dtype != DType::Float32) {
    node_fail<UnsupportedModelError>(node, std::string("the CPU backend has no ") + dtype_name(inputs[1].info.dtype) +
                                               " scale kernel for " + node.op_type);
  }
}

KernelChoice plan_quantize(const Node& node, const std::vector<ValueInfo>& inputs,
                           const std::vector<TensorInfo>& outputs) {
  require_float32_scale(node, inputs);
  const DType type = outputs[0].dtype;
  const QuantLayout layout = layout_of(node, inputs);
  KernelChoice choice;
  auto make = [&](auto x) {
    with_quant_codec(type, [&](auto codec) {
      choice.kernel = std::make_unique<QuantizeKernel<decltype(x), decltype(codec)>>(
          layout, type, quantize_saturates(node), has_zero_point(inputs));
    });
  };
  if (inputs[0].info.dtype == DType::Int32) make(int32_t{});
  else make(float{});
  if (!choice.kernel) node_fail<UnsupportedModelError>(node, std::string("no CPU kernel quantizes to ") + dtype_name(type));
  choice.algorithm = std::string("float32->") + dtype_name(type);
  return choice;
}

KernelChoice plan_dequantize(const Node& node, const std::vector<ValueInfo>& inputs,
                             const std::vector<TensorInfo>& outputs) {
  require_float32_scale(node, inputs);
  const DType type = inputs[0].info.dtype;
  const QuantLayout layout = layout_of(node, inputs);
  KernelChoice choice;
  with_quant_codec(type, [&](auto codec) {
    choice.kernel = std::make_unique<DequantizeKernel<decltype(codec)>>(layout, type, has_zero_point(inputs));
  });
  if (!choice.kernel) node_fail<UnsupportedModelError>(node, std::string("no CPU kernel dequantizes ") + dtype_name(type));
  choice.algorithm = std::string(dtype_name(type)) + "->" + dtype_name(outputs[0].dtype);
  return choice;
}

}  // namespace

void register_cpu_quantize_linear_kernels(KernelRegistry& r) {
  r.add("QuantizeLinear", plan_quantize).with_dtypes(quantized_types());
  r.add("DequantizeLinear", plan_dequantize).with_dtypes(quantized_types());
}

}  // namespace dnnx
