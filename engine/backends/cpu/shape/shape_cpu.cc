// Shape and ConstantOfShape on the CPU. Both results are known at plan time (Shape's input
// shape is fixed by then): the kernels only write them out.
#include <algorithm>
#include <cstring>

#include "runtime/kernel_registry.h"
#include "backends/cpu/runtime/element_type.h"
#include "ops/shape/shape_ops.h"

namespace dnnx {

namespace {

// Writes fixed bytes to output 0 (Shape: the dims as int64).
class WriteBytesKernel final : public Kernel {
 public:
  explicit WriteBytesKernel(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  void run(const KernelArgs& args) const override {
    if (!bytes_.empty()) std::memcpy(args.outputs[0], bytes_.data(), bytes_.size());
  }

 private:
  std::vector<uint8_t> bytes_;
};

// Fills output 0 with one element repeated n times.
template <class E>
class FillKernel final : public Kernel {
 public:
  FillKernel(int64_t n, const ConstTensor& value) : n_(n) { std::memcpy(&value_, value.data.data(), sizeof(E)); }
  void run(const KernelArgs& args) const override {
    E* y = args.out<E>(0);
    std::fill(y, y + n_, value_);
  }

 private:
  int64_t n_;
  E value_;
};

KernelChoice plan_shape(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape dims = shape_op_dims(node, inputs[0].info.shape);
  std::vector<uint8_t> bytes(dims.size() * sizeof(int64_t));
  if (!dims.empty()) std::memcpy(bytes.data(), dims.data(), bytes.size());
  KernelChoice choice;
  choice.algorithm = "known at plan";
  choice.kernel = std::make_unique<WriteBytesKernel>(std::move(bytes));
  return choice;
}

KernelChoice plan_constant_of_shape(const Node& node, const std::vector<ValueInfo>&,
                                    const std::vector<TensorInfo>& outputs) {
  const ConstTensor value = constant_of_shape_value(node);
  KernelChoice choice;
  choice.algorithm = "fill";
  choice.kernel = make_for_element_size<FillKernel>(value.info.dtype, numel(outputs[0].shape), value);
  return choice;
}

}  // namespace

void register_cpu_shape_kernels(KernelRegistry& r) {
  r.add("Shape", plan_shape).with_dtypes(movable_types());
  r.add("ConstantOfShape", plan_constant_of_shape).with_dtypes(movable_types());
}

}  // namespace dnnx
