// ScatterElements and Scatter on the CPU: y = data (copied unless the planner let y share data's
// buffer), then for each position p of indices, in order, y[p with p[axis] = indices[p]] is
// replaced by updates[p] (any element size) or combined with it (add, mul, max, min: per C++
// type). Duplicate indices thus apply in order: the last update wins without a reduction.
#include <algorithm>
#include <cstring>

#include "backends/cpu/indexing/index_read.h"
#include "backends/cpu/runtime/element_type.h"
#include "ops/indexing/indexing.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct ScatterElementsPlan {
  Shape data, indices;
  int64_t axis = 0;
  DType index_type = DType::Int64;
  ScatterReduction reduction = ScatterReduction::None;
  std::string where;
};

// Calls fn(update_index, data_index) for each element of indices, in order.
template <class Fn>
void each_scattered(const ScatterElementsPlan& p, const void* idx, Fn&& fn) {
  const size_t rank = p.indices.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * p.data[d];
  std::vector<int64_t> at(rank, 0);
  const int64_t n = numel(p.indices);
  for (int64_t u = 0; u < n; ++u) {
    int64_t dst = 0;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t c = static_cast<int64_t>(d) == p.axis
                            ? checked_index(p.where, read_index(idx, p.index_type, u), p.data[d])
                            : at[d];
      dst += c * strides[d];
    }
    fn(u, dst);
    for (size_t d = rank; d-- > 0;) {
      if (++at[d] < p.indices[d]) break;
      at[d] = 0;
    }
  }
}

template <class T>
T combine(ScatterReduction r, T old, T update) {
  switch (r) {
    case ScatterReduction::None: return update;
    case ScatterReduction::Add: return old + update;
    case ScatterReduction::Mul: return old * update;
    case ScatterReduction::Max: return std::max(old, update);
    case ScatterReduction::Min: return std::min(old, update);
  }
  return update;
}

// T: an element-size carrier (no reduction) or the C++ type (a reduction).
template <class T>
class ScatterElementsKernel final : public Kernel {
 public:
  explicit ScatterElementsKernel(ScatterElementsPlan p) : p_(std::move(p)) {}
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    const T* u = args.in<T>(2);
    T* y = args.out<T>(0);
    if (y != x) std::memcpy(y, x, static_cast<size_t>(numel(p_.data)) * sizeof(T));
    if (p_.reduction == ScatterReduction::None) {
      each_scattered(p_, args.inputs[1], [&](int64_t i, int64_t o) { y[o] = u[i]; });
    } else {
      each_scattered(p_, args.inputs[1], [&](int64_t i, int64_t o) { y[o] = combine(p_.reduction, y[o], u[i]); });
    }
  }

 private:
  ScatterElementsPlan p_;
};

KernelChoice plan_scatter_elements(const Node& node, const std::vector<ValueInfo>& inputs,
                                   const std::vector<TensorInfo>&) {
  ScatterElementsPlan p;
  p.data = inputs[0].info.shape;
  p.indices = inputs[1].info.shape;
  p.axis = normalize_axis(node, node.attr_int("axis", 0), static_cast<int64_t>(p.data.size()));
  p.index_type = inputs[1].info.dtype;
  p.reduction = node.op_type == "Scatter" ? ScatterReduction::None : scatter_reduction(node);
  p.where = node.where();
  KernelChoice choice;
  if (p.reduction == ScatterReduction::None) {
    choice.algorithm = "copy+scatter";
    choice.kernel = make_for_element_size<ScatterElementsKernel>(inputs[0].info.dtype, std::move(p));
  } else {
    choice.algorithm = "copy+scatter-reduce";
    choice.kernel = with_dtype(inputs[0].info.dtype, [&](auto t) -> std::unique_ptr<Kernel> {
      return std::make_unique<ScatterElementsKernel<decltype(t)>>(p);
    });
  }
  return choice;
}

}  // namespace

void register_cpu_scatter_elements_kernels(KernelRegistry& r) {
  r.add("ScatterElements", plan_scatter_elements);
  r.add("Scatter", plan_scatter_elements);
}

}  // namespace dnnx
