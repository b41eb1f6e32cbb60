// Where on the CPU: y = condition ? X : Y, the three inputs broadcast to the output. Any element
// size (the values are only copied). Each input is walked with its own element strides over the
// output dims (0 where it broadcasts), by one index counter; the innermost dim is a plain loop.
// Its gradient (float32 X and Y; none for the condition): dX = the sum, over the dims X was
// broadcast along, of dY where the condition holds; dY likewise where it does not
// (broadcast_sum.h, as the binary ops' gradients).
#include <vector>

#include "backends/cpu/elementwise/broadcast_sum.h"
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

// The workspace: dY masked by the condition (broadcast to the output), one side at a time.
class WhereGradKernel final : public GradKernel {
 public:
  WhereGradKernel(const Shape& cond, const Shape& x, const Shape& y, const Shape& out)
      : walk_cond_(broadcast_walk(cond, out)), walk_x_(broadcast_walk(x, out)), walk_y_(broadcast_walk(y, out)),
        size_x_(numel(x)), size_y_(numel(y)) {}

  void run(const GradArgs& args) const override {
    const float* dy = args.d_outputs[0];
    float* masked = static_cast<float*>(args.workspace);
    const bool* cond = static_cast<const bool*>(args.inputs[0]);
    for (int side = 1; side <= 2; ++side) {
      float* d = args.d_inputs[side];
      if (!d) continue;
      const bool keep = side == 1;  // X where the condition holds, Y where not
      for_each_run(walk_cond_, [&](int64_t out, int64_t in, int64_t count, int64_t step) {
        for (int64_t i = 0; i < count; ++i) masked[out + i] = cond[in + i * step] == keep ? dy[out + i] : 0.0f;
      });
      broadcast_reduce(side == 1 ? walk_x_ : walk_y_, masked, d, side == 1 ? size_x_ : size_y_);
    }
  }

 private:
  BroadcastWalk walk_cond_, walk_x_, walk_y_;
  int64_t size_x_, size_y_;
};

GradChoice plan_where_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "masked broadcast reduce";
  choice.workspace_bytes = static_cast<size_t>(numel(r.outputs[0].shape)) * sizeof(float);
  choice.kernel = std::make_unique<WhereGradKernel>(r.inputs[0].info.shape, r.inputs[1].info.shape,
                                                    r.inputs[2].info.shape, r.outputs[0].shape);
  return choice;
}

}  // namespace

void register_cpu_where_kernels(KernelRegistry& r) {
  r.add("Where", plan_where).with_dtypes(movable_types()).with_gradient(plan_where_grad);
}

}  // namespace dnnx
