// Cast and CastLike on the CPU between every engine dtype (Note [dtypes] in ir/tensor.h), element
// by element through the source's proxy C++ type (its own for the number types and bool, float
// for the 2-byte and 1-byte floats, int8_t/uint8_t for int4/uint4):
//   number -> number   static_cast: float -> int truncates toward zero (as C++ and onnxruntime);
//                      to bool is x != 0 (NaN gives true); from bool 0 or 1; float64 -> float32
//                      and int -> float round to nearest even
//   -> float16/bfloat16          via float32, round to nearest even (float64 rounds twice, as
//                                onnxruntime's does)
//   -> float8 types, float4e2m1  round to nearest even from the exact value; past the range:
//                                `saturate` (ir/minifloat.cc)
//   -> int4/uint4      an integer wraps to its low 4 bits; a float truncates, and one outside
//                      the range (or NaN) gives 0 (ml_dtypes', so onnx's reference's, rule)
// The same type is a plain copy.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "backends/cpu/runtime/element_type.h"
#include "ops/layout/cast.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <class T>
struct Number {  // a type with C++ arithmetic (and bool): itself
  using Proxy = T;
  using Stored = T;
  static Proxy read(Stored v, DType) { return v; }
  template <class P>
  static Stored write(P p, DType, bool) {
    if constexpr (std::is_same_v<T, bool>) return p != P{};
    else return static_cast<T>(p);
  }
};

struct Half {  // float16 and bfloat16: their bits
  using Proxy = float;
  using Stored = uint16_t;
  static Proxy read(Stored v, DType t) { return storage_to_float(v, t); }
  template <class P>
  static Stored write(P p, DType t, bool) { return float_to_storage(static_cast<float>(p), t); }
};

struct Mini {  // the float8 types and float4e2m1: one byte
  using Proxy = float;
  using Stored = uint8_t;
  static Proxy read(Stored v, DType t) { return minifloat_to_float(v, t); }
  template <class P>
  static Stored write(P p, DType t, bool saturate) { return float_to_minifloat(static_cast<double>(p), t, saturate); }
};

template <bool Signed>
struct Nibble {  // int4 / uint4: one per byte, the 4 bits in the low half
  using Proxy = std::conditional_t<Signed, int8_t, uint8_t>;
  using Stored = uint8_t;
  static constexpr int64_t kMin = Signed ? -8 : 0, kMax = Signed ? 7 : 15;
  static Proxy read(Stored v, DType) {
    const int bits = v & 0xF;
    return static_cast<Proxy>(Signed && bits >= 8 ? bits - 16 : bits);
  }
  template <class P>
  static Stored write(P p, DType, bool) {
    if constexpr (std::is_floating_point_v<P>) {
      const double t = std::trunc(static_cast<double>(p));
      if (!(t >= kMin && t <= kMax)) return 0;
      return static_cast<Stored>(static_cast<int64_t>(t) & 0xF);
    } else {
      return static_cast<Stored>(static_cast<uint64_t>(p) & 0xF);
    }
  }
};

template <class From, class To>
class CastKernel final : public Kernel {
 public:
  CastKernel(int64_t n, DType from, DType to, bool saturate) : n_(n), from_(from), to_(to), saturate_(saturate) {}
  void run(const KernelArgs& args) const override {
    const auto* x = args.in<typename From::Stored>(0);
    auto* y = args.out<typename To::Stored>(0);
    for (int64_t i = 0; i < n_; ++i) y[i] = To::write(From::read(x[i], from_), to_, saturate_);
  }

 private:
  int64_t n_;
  DType from_, to_;
  bool saturate_;
};

class CopyKernel final : public Kernel {
 public:
  explicit CopyKernel(size_t bytes) : bytes_(bytes) {}
  void run(const KernelArgs& args) const override {
    if (bytes_) std::memcpy(args.outputs[0], args.inputs[0], bytes_);
  }

 private:
  size_t bytes_;
};

// fn(Codec{}) with the codec of `t` (above).
template <class Fn>
decltype(auto) with_codec(DType t, Fn&& fn) {
  switch (t) {
    case DType::Float16:
    case DType::BFloat16: return fn(Half{});
    case DType::Float8E4M3FN:
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ:
    case DType::Float4E2M1: return fn(Mini{});
    case DType::Int4: return fn(Nibble<true>{});
    case DType::UInt4: return fn(Nibble<false>{});
    case DType::Bool: return fn(Number<bool>{});
    default: return with_number(t, [&](auto v) { return fn(Number<decltype(v)>{}); });
  }
}

KernelChoice plan_cast_to(DType from, DType to, bool saturate, const std::vector<TensorInfo>& outputs) {
  const int64_t n = numel(outputs[0].shape);
  KernelChoice choice;
  if (from == to) {
    choice.algorithm = "copy";
    choice.kernel = std::make_unique<CopyKernel>(outputs[0].bytes());
    return choice;
  }
  choice.algorithm = std::string(dtype_name(from)) + "->" + dtype_name(to);
  choice.kernel = with_codec(from, [&](auto f) {
    return with_codec(to, [&](auto t) -> std::unique_ptr<Kernel> {
      return std::make_unique<CastKernel<decltype(f), decltype(t)>>(n, from, to, saturate);
    });
  });
  return choice;
}

KernelChoice plan_cast(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  return plan_cast_to(inputs[0].info.dtype, cast_target(node), cast_saturates(node), outputs);
}

KernelChoice plan_cast_like(const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>& outputs) {
  return plan_cast_to(inputs[0].info.dtype, inputs[1].info.dtype, cast_saturates(node), outputs);
}

}  // namespace

void register_cpu_cast_kernels(KernelRegistry& r) {
  r.add("Cast", plan_cast).with_dtypes(movable_types());
  r.add("CastLike", plan_cast_like).with_dtypes(movable_types());
}

}  // namespace dnnx
