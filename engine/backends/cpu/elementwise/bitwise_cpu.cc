// BitShift, BitwiseAnd, BitwiseOr, BitwiseXor on the CPU through the one broadcasting loop
// (broadcast_binary.h), BitwiseNot as a plain loop; every integer type (with_number), no float type.
#include <type_traits>

#include "backends/cpu/elementwise/broadcast_binary.h"
#include "backends/cpu/runtime/element_type.h"
#include "ops/elementwise/bitwise.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <BitOp Op>
struct BitFn {
  template <class T>
  T operator()(T a, T b) const { return bit_op<Op>(a, b); }
};

[[noreturn]] void refuse_non_integer(const Node& node, DType t) {
  node_fail<UnsupportedModelError>(node, std::string("inputs must be an integer type, got ") + dtype_name(t));
}

template <BitOp Op>
KernelChoice plan_bit_op(const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>& outputs) {
  KernelChoice choice;
  with_number(outputs[0].dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_integral_v<T>) {
      choice = broadcast_binary_choice<T, T>(inputs, outputs, BitFn<Op>{});
    } else {
      refuse_non_integer(node, outputs[0].dtype);
    }
  });
  return choice;
}

KernelChoice plan_bit_shift(const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>& outputs) {
  return node.attr_string("direction", "") == "LEFT" ? plan_bit_op<BitOp::ShiftLeft>(node, inputs, outputs)
                                                     : plan_bit_op<BitOp::ShiftRight>(node, inputs, outputs);
}

template <class T>
class BitwiseNotKernel final : public Kernel {
 public:
  explicit BitwiseNotKernel(int64_t n) : n_(n) {}
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    for (int64_t i = 0; i < n_; ++i) y[i] = static_cast<T>(~x[i]);
  }

 private:
  int64_t n_;
};

KernelChoice plan_bitwise_not(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "elementwise";
  choice.kernel = with_number(inputs[0].info.dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    using T = decltype(t);
    if constexpr (std::is_integral_v<T>) {
      return std::make_unique<BitwiseNotKernel<T>>(numel(inputs[0].info.shape));
    } else {
      refuse_non_integer(node, inputs[0].info.dtype);
    }
  });
  return choice;
}

}  // namespace

// The integer types beyond int32 and int64 (Note [cpu dtypes]); no float type.
const std::vector<DType> kSmallAndUnsigned = {DType::Int8, DType::UInt8, DType::Int16, DType::UInt16, DType::UInt32,
                                              DType::UInt64};

void register_cpu_bitwise_kernels(KernelRegistry& r) {
  r.add("BitShift", plan_bit_shift).with_dtypes(kSmallAndUnsigned);
  r.add("BitwiseAnd", plan_bit_op<BitOp::And>).with_dtypes(kSmallAndUnsigned);
  r.add("BitwiseOr", plan_bit_op<BitOp::Or>).with_dtypes(kSmallAndUnsigned);
  r.add("BitwiseXor", plan_bit_op<BitOp::Xor>).with_dtypes(kSmallAndUnsigned);
  r.add("BitwiseNot", plan_bitwise_not).with_dtypes(kSmallAndUnsigned);
}

}  // namespace dnnx
