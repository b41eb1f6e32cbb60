// Slice on the CPU, for any element size: a counter over the output's dims but the last; each
// output row reads X from start + o * step per dim, in one memcpy when the last step is 1. Its
// gradient (float32) walks the same rows: dX zeroed, each dY row written where the forward read it.
#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/kernel_registry.h"
#include "backends/cpu/runtime/element_type.h"
#include "ops/layout/slice.h"

namespace dnnx {

namespace {

// Calls row(at, src) for each output row: its first element `at` in Y and `src` in X (the row's
// elements then step r.step.back() apart in X). rank >= 1, Y not empty.
template <class Row>
void for_each_slice_row(const SliceRanges& r, const Shape& in_strides, Row row) {
  const size_t rank = r.out.size();
  const int64_t total = numel(r.out), width = r.out[rank - 1];
  std::vector<int64_t> index(rank - 1, 0);
  for (int64_t at = 0; at < total; at += width) {
    int64_t src = r.start[rank - 1];
    for (size_t d = 0; d + 1 < rank; ++d) src += (r.start[d] + index[d] * r.step[d]) * in_strides[d];
    row(at, src);
    for (size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < r.out[d]) break;
      index[d] = 0;
    }
  }
}

template <class E>
class SliceKernel final : public Kernel {
 public:
  SliceKernel(Shape in, SliceRanges r) : r_(std::move(r)), in_strides_(packed_strides(in)) {}

  void run(const KernelArgs& args) const override {
    const E* x = args.in<E>(0);
    E* y = args.out<E>(0);
    if (numel(r_.out) == 0) return;
    if (r_.out.empty()) {
      *y = *x;
      return;
    }
    const int64_t width = r_.out.back(), col_step = r_.step.back();
    for_each_slice_row(r_, in_strides_, [&](int64_t at, int64_t src) {
      if (col_step == 1) {
        std::memcpy(y + at, x + src, static_cast<size_t>(width) * sizeof(E));
      } else {
        for (int64_t k = 0; k < width; ++k) y[at + k] = x[src + k * col_step];
      }
    });
  }

 private:
  SliceRanges r_;
  Shape in_strides_;  // X's element strides
};

// dX: zeros, then each dY row written back where the forward read it.
class SliceGradKernel final : public GradKernel {
 public:
  SliceGradKernel(Shape in, SliceRanges r) : r_(std::move(r)), in_strides_(packed_strides(in)), in_(numel(in)) {}

  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float* dy = args.d_outputs[0];
    std::fill(dx, dx + in_, 0.0f);
    if (numel(r_.out) == 0) return;
    if (r_.out.empty()) {
      *dx = *dy;
      return;
    }
    const int64_t width = r_.out.back(), col_step = r_.step.back();
    for_each_slice_row(r_, in_strides_, [&](int64_t at, int64_t src) {
      for (int64_t k = 0; k < width; ++k) dx[src + k * col_step] = dy[at + k];
    });
  }

 private:
  SliceRanges r_;
  Shape in_strides_;
  int64_t in_;  // X's elements
};

KernelChoice plan_slice(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  SliceRanges r = slice_ranges(node, inputs, x);
  KernelChoice choice;
  choice.algorithm = !r.step.empty() && r.step.back() != 1 ? "strided copy" : "row copy";
  choice.kernel = make_for_element_size<SliceKernel>(inputs[0].info.dtype, x, std::move(r));
  return choice;
}

GradChoice plan_slice_grad(const GradRequest& r) {
  const Shape& x = r.inputs[0].info.shape;
  GradChoice choice;
  choice.algorithm = "zero fill + row scatter";
  choice.kernel = std::make_unique<SliceGradKernel>(x, slice_ranges(r.node, r.inputs, x));
  return choice;
}

}  // namespace

void register_cpu_slice_kernels(KernelRegistry& r) {
  r.add("Slice", plan_slice).with_dtypes(movable_types()).with_gradient(plan_slice_grad);
}

}  // namespace dnnx
