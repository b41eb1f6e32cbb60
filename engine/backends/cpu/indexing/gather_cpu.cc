// Gather on the CPU, for any element size: data viewed as [outer, size, inner] (size = the
// gathered axis) and y as [outer, count, inner]; one copy of `inner` elements per index per
// outer row. Indices are read as the kernel runs and checked against the axis.
#include <algorithm>
#include <cstring>

#include "runtime/kernel_registry.h"
#include "backends/cpu/runtime/element_type.h"

namespace dnnx {

namespace {

struct GatherShape {
  int64_t outer = 1, size = 0, inner = 1, count = 0;
  DType index_type = DType::Int64;
  std::string where;  // the node, for an index out of range at run time
};

template <class E>
class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(GatherShape s) : s_(std::move(s)) {}

  void run(const KernelArgs& args) const override {
    const E* x = args.in<E>(0);
    E* y = args.out<E>(0);
    for (int64_t j = 0; j < s_.count; ++j) {
      const int64_t raw = s_.index_type == DType::Int32 ? args.in<int32_t>(1)[j] : args.in<int64_t>(1)[j];
      const int64_t i = raw < 0 ? raw + s_.size : raw;
      if (i < 0 || i >= s_.size) {
        throw InputError(s_.where + ": index " + std::to_string(raw) + " is out of range for an axis of size " +
                         std::to_string(s_.size));
      }
      for (int64_t o = 0; o < s_.outer; ++o) {
        std::memcpy(y + (o * s_.count + j) * s_.inner, x + (o * s_.size + i) * s_.inner,
                    static_cast<size_t>(s_.inner) * sizeof(E));
      }
    }
  }

 private:
  GatherShape s_;
};

KernelChoice plan_gather(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), static_cast<int64_t>(x.size()));
  GatherShape s;
  for (int64_t d = 0; d < axis; ++d) s.outer *= x[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < x.size(); ++d) s.inner *= x[d];
  s.size = x[axis];
  s.count = numel(inputs[1].info.shape);
  s.index_type = inputs[1].info.dtype;
  s.where = node.where();
  KernelChoice choice;
  choice.algorithm = "copy";
  choice.kernel = make_for_element_size<GatherKernel>(inputs[0].info.dtype, std::move(s));
  return choice;
}

}  // namespace

void register_cpu_gather_kernels(KernelRegistry& r) { r.add("Gather", plan_gather).with_dtypes(movable_types()); }

}  // namespace dnnx
