// ReduceMean on the CPU: X's dims are merged into alternating runs of kept and reduced dims;
// a counter walks X in order, adding each element into its output cell (the output stride of
// a reduced run is 0), and the sums are scaled by 1 / (elements per cell) at the end.
#include <algorithm>
#include <vector>

#include "runtime/kernel_registry.h"
#include "ops/reduce.h"

namespace dnnx {

namespace {

struct ReduceWalk {
  std::vector<int64_t> sizes;        // merged X dims, outermost first
  std::vector<int64_t> out_strides;  // the output's stride along each (0 where reduced)
  int64_t in_total = 0, out_total = 0;
};

ReduceWalk reduce_walk(const Shape& x, const std::vector<bool>& reduced) {
  ReduceWalk w;
  w.in_total = numel(x);
  std::vector<bool> kinds;
  for (size_t d = 0; d < x.size(); ++d) {
    if (x[d] == 1) continue;
    if (!kinds.empty() && kinds.back() == reduced[d]) {
      w.sizes.back() *= x[d];
    } else {
      w.sizes.push_back(x[d]);
      kinds.push_back(reduced[d]);
    }
  }
  w.out_strides.assign(w.sizes.size(), 0);
  int64_t step = 1;
  for (size_t i = w.sizes.size(); i-- > 0;) {
    if (kinds[i]) continue;
    w.out_strides[i] = step;
    step *= w.sizes[i];
  }
  w.out_total = step;
  return w;
}

class ReduceMeanKernel final : public Kernel {
 public:
  explicit ReduceMeanKernel(ReduceWalk w) : w_(std::move(w)) {}

  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    float* y = args.out(0);
    std::fill(y, y + w_.out_total, 0.0f);
    if (w_.in_total == 0) return;
    if (w_.sizes.empty()) {
      y[0] = x[0];
      return;
    }
    const size_t last = w_.sizes.size() - 1;
    const int64_t inner = w_.sizes[last], inner_stride = w_.out_strides[last];
    std::vector<int64_t> index(last, 0);
    int64_t out = 0;
    for (int64_t at = 0; at < w_.in_total; at += inner) {
      if (inner_stride == 0) {
        float sum = 0.0f;
        for (int64_t k = 0; k < inner; ++k) sum += x[at + k];
        y[out] += sum;
      } else {
        for (int64_t k = 0; k < inner; ++k) y[out + k] += x[at + k];
      }
      for (size_t d = last; d-- > 0;) {
        out += w_.out_strides[d];
        if (++index[d] < w_.sizes[d]) break;
        out -= w_.out_strides[d] * w_.sizes[d];
        index[d] = 0;
      }
    }
    const float scale = static_cast<float>(w_.out_total) / static_cast<float>(w_.in_total);
    for (int64_t i = 0; i < w_.out_total; ++i) y[i] *= scale;
  }

 private:
  ReduceWalk w_;
};

KernelChoice plan_reduce_mean(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const ReduceAxes axes = reduce_axes(node, inputs, x);
  KernelChoice choice;
  choice.algorithm = "accumulate";
  choice.kernel = std::make_unique<ReduceMeanKernel>(reduce_walk(x, axes.reduced));
  return choice;
}

}  // namespace

void register_cpu_reduce_kernels(KernelRegistry& r) { r.add("ReduceMean", plan_reduce_mean); }

}  // namespace dnnx
