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
// The same type is a plain copy; to and from string: cast_string_cpu.h.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "backends/cpu/layout/cast_codecs.h"
#include "backends/cpu/layout/cast_string_cpu.h"
#include "backends/cpu/runtime/element_type.h"
#include "ops/layout/cast.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

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

KernelChoice plan_cast_to(const Node& node, DType from, DType to, bool saturate, const std::vector<TensorInfo>& outputs) {
  const int64_t n = numel(outputs[0].shape);
  KernelChoice choice;
  if (from == to) {
    choice.algorithm = "copy";
    choice.kernel = std::make_unique<CopyKernel>(outputs[0].bytes());
    return choice;
  }
  choice.algorithm = std::string(dtype_name(from)) + "->" + dtype_name(to);
  if (from == DType::String || to == DType::String) {
    choice.kernel = make_string_cast(node.where(), from, to, n);
    return choice;
  }
  choice.kernel = with_codec(from, [&](auto f) {
    return with_codec(to, [&](auto t) -> std::unique_ptr<Kernel> {
      return std::make_unique<CastKernel<decltype(f), decltype(t)>>(n, from, to, saturate);
    });
  });
  return choice;
}

KernelChoice plan_cast(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  return plan_cast_to(node, inputs[0].info.dtype, cast_target(node), cast_saturates(node), outputs);
}

KernelChoice plan_cast_like(const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>& outputs) {
  return plan_cast_to(node, inputs[0].info.dtype, inputs[1].info.dtype, cast_saturates(node), outputs);
}

}  // namespace

void register_cpu_cast_kernels(KernelRegistry& r) {
  r.add("Cast", plan_cast).with_dtypes(movable_types());
  r.add("CastLike", plan_cast_like).with_dtypes(movable_types());
}

}  // namespace dnnx
