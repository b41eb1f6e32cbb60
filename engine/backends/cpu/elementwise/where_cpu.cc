// Where on the CPU: y = condition ? X : Y, the three inputs broadcast to the output. Any element
// size (the values are only copied). Each input is walked with its own element strides over the
// output dims (0 where it broadcasts), by one index counter; the innermost dim is a plain loop.
#include <vector>

#include "backends/cpu/runtime/element_type.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct WherePlan {
  std::vector<int64_t> sizes;      // the output dims, outermost first (rank >= 1)
  std::vector<int64_t> stride[3];  // per input (condition, X, Y): its element stride along each dim
  int64_t n = 0;                   // output elements
};

// Input `in`'s strides over `out`'s dims: its contiguous stride, or 0 where it broadcasts.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  const size_t rank = out.size(), lead = rank - in.size();
  std::vector<int64_t> strides(rank, 0);
  int64_t step = 1;
  for (size_t d = rank; d-- > lead;) {
    const int64_t size = in[d - lead];
    if (size != 1) strides[d] = step;
    step *= size;
  }
  return strides;
}

template <class E>
class WhereKernel final : public Kernel {
 public:
  explicit WhereKernel(WherePlan plan) : p_(std::move(plan)) {}

  void run(const KernelArgs& args) const override {
    const bool* c = args.in<bool>(0);
    const E* x = args.in<E>(1);
    const E* y = args.in<E>(2);
    E* out = args.out<E>(0);
    const size_t last = p_.sizes.size() - 1;
    const int64_t inner = p_.sizes[last];
    const int64_t sc = p_.stride[0][last], sx = p_.stride[1][last], sy = p_.stride[2][last];
    std::vector<int64_t> index(last, 0);
    int64_t oc = 0, ox = 0, oy = 0;
    for (int64_t done = 0; done < p_.n; done += inner) {
      for (int64_t i = 0; i < inner; ++i) out[done + i] = c[oc + i * sc] ? x[ox + i * sx] : y[oy + i * sy];
      for (size_t d = last; d-- > 0;) {  // advance the counter, innermost outer dim first
        oc += p_.stride[0][d];
        ox += p_.stride[1][d];
        oy += p_.stride[2][d];
        if (++index[d] < p_.sizes[d]) break;
        oc -= p_.stride[0][d] * p_.sizes[d];
        ox -= p_.stride[1][d] * p_.sizes[d];
        oy -= p_.stride[2][d] * p_.sizes[d];
        index[d] = 0;
      }
    }
  }

 private:
  WherePlan p_;
};

KernelChoice plan_where(const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  WherePlan plan;
  plan.sizes = outputs[0].shape.empty() ? Shape{1} : outputs[0].shape;
  plan.n = numel(outputs[0].shape);
  bool broadcast = false;
  for (int i = 0; i < 3; ++i) {
    plan.stride[i] = broadcast_strides(inputs[i].info.shape, plan.sizes);
    broadcast = broadcast || inputs[i].info.shape != outputs[0].shape;
  }
  KernelChoice choice;
  choice.algorithm = broadcast ? "broadcast select" : "elementwise select";
  choice.kernel = make_for_element_size<WhereKernel>(outputs[0].dtype, std::move(plan));
  return choice;
}

}  // namespace

void register_cpu_where_kernels(KernelRegistry& r) { r.add("Where", plan_where).with_dtypes(movable_types()); }

}  // namespace dnnx
