// OneHot on the CPU, for any element size: indices viewed as [outer, inner] around the inserted
// axis, y as [outer, depth, inner]; y filled with off, then on written once per in-range index.
#include <algorithm>
#include <cmath>

#include "backends/cpu/runtime/element_type.h"
#include "ops/indexing/one_hot.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct OneHotPlan {
  int64_t outer = 1, inner = 1, depth = 0;
  DType index_type = DType::Int64;
};

int64_t index_at(const void* p, DType t, int64_t i) {
  switch (t) {
    case DType::Float32: return static_cast<int64_t>(std::trunc(static_cast<const float*>(p)[i]));
    case DType::Int32: return static_cast<const int32_t*>(p)[i];
    default: return static_cast<const int64_t*>(p)[i];
  }
}

template <class E>
class OneHotKernel final : public Kernel {
 public:
  explicit OneHotKernel(OneHotPlan p) : p_(p) {}
  void run(const KernelArgs& args) const override {
    const E* values = args.in<E>(2);
    const E off = values[0], on = values[1];
    E* y = args.out<E>(0);
    std::fill(y, y + p_.outer * p_.depth * p_.inner, off);
    for (int64_t o = 0; o < p_.outer; ++o) {
      for (int64_t i = 0; i < p_.inner; ++i) {
        int64_t at = index_at(args.inputs[0], p_.index_type, o * p_.inner + i);
        if (at < 0) at += p_.depth;
        if (at < 0 || at >= p_.depth) continue;  // out of range: a line of off
        y[(o * p_.depth + at) * p_.inner + i] = on;
      }
    }
  }

 private:
  OneHotPlan p_;
};

KernelChoice plan_one_hot(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& idx = inputs[0].info.shape;
  const int64_t axis = one_hot_axis(node, static_cast<int64_t>(idx.size()));
  OneHotPlan p;
  for (int64_t d = 0; d < axis; ++d) p.outer *= idx[d];
  for (size_t d = static_cast<size_t>(axis); d < idx.size(); ++d) p.inner *= idx[d];
  p.depth = one_hot_depth(node, inputs);
  p.index_type = inputs[0].info.dtype;
  KernelChoice choice;
  choice.algorithm = "fill+mark";
  choice.kernel = make_for_element_size<OneHotKernel>(inputs[2].info.dtype, p);
  return choice;
}

}  // namespace

void register_cpu_one_hot_kernels(KernelRegistry& r) { r.add("OneHot", plan_one_hot); }

}  // namespace dnnx
