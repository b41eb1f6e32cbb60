// Gather on the CPU, for any element size: data viewed as [outer, size, inner] (size = the
// gathered axis) and y as [outer, count, inner]; one copy of `inner` elements per index per
// outer row. Indices are read as the kernel runs and checked against the axis. Its gradient
// (float32 data; none for the indices): dX zeroed, then each index's dY rows added into the rows
// it read, in index order (a repeated index adds up; the same sums on every run).
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

// An index of `s`, read from the indices input as a kernel runs, checked and made non-negative.
int64_t gather_index(const GatherShape& s, const void* indices, int64_t j) {
  const int64_t raw = s.index_type == DType::Int32 ? static_cast<const int32_t*>(indices)[j]
                                                   : static_cast<const int64_t*>(indices)[j];
  const int64_t i = raw < 0 ? raw + s.size : raw;
  if (i < 0 || i >= s.size) {
    throw InputError(s.where + ": index " + std::to_string(raw) + " is out of range for an axis of size " +
                     std::to_string(s.size));
  }
  return i;
}

template <class E>
class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(GatherShape s) : s_(std::move(s)) {}

  void run(const KernelArgs& args) const override {
    const E* x = args.in<E>(0);
    E* y = args.out<E>(0);
    for (int64_t j = 0; j < s_.count; ++j) {
      const int64_t i = gather_index(s_, args.inputs[1], j);
      for (int64_t o = 0; o < s_.outer; ++o) {
        std::memcpy(y + (o * s_.count + j) * s_.inner, x + (o * s_.size + i) * s_.inner,
                    static_cast<size_t>(s_.inner) * sizeof(E));
      }
    }
  }

 private:
  GatherShape s_;
};

class GatherGradKernel final : public GradKernel {
 public:
  explicit GatherGradKernel(GatherShape s) : s_(std::move(s)) {}

  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float* dy = args.d_outputs[0];
    std::fill(dx, dx + s_.outer * s_.size * s_.inner, 0.0f);
    for (int64_t j = 0; j < s_.count; ++j) {
      const int64_t i = gather_index(s_, args.inputs[1], j);
      for (int64_t o = 0; o < s_.outer; ++o) {
        const float* from = dy + (o * s_.count + j) * s_.inner;
        float* to = dx + (o * s_.size + i) * s_.inner;
        for (int64_t k = 0; k < s_.inner; ++k) to[k] += from[k];
      }
    }
  }

 private:
  GatherShape s_;
};

GatherShape gather_shape(const Node& node, const std::vector<ValueInfo>& inputs) {
  const Shape& x = inputs[0].info.shape;
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), static_cast<int64_t>(x.size()));
  GatherShape s;
  for (int64_t d = 0; d < axis; ++d) s.outer *= x[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < x.size(); ++d) s.inner *= x[d];
  s.size = x[axis];
  s.count = numel(inputs[1].info.shape);
  s.index_type = inputs[1].info.dtype;
  s.where = node.where();
  return s;
}

KernelChoice plan_gather(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "copy";
  choice.kernel = make_for_element_size<GatherKernel>(inputs[0].info.dtype, gather_shape(node, inputs));
  return choice;
}

GradChoice plan_gather_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "zero fill + row sums in index order";
  choice.kernel = std::make_unique<GatherGradKernel>(gather_shape(r.node, r.inputs));
  return choice;
}

}  // namespace

void register_cpu_gather_kernels(KernelRegistry& r) {
  r.add("Gather", plan_gather).with_dtypes(movable_types()).with_gradient(plan_gather_grad);
}

}  // namespace dnnx
