// Slice on the CPU, for any element size: a counter over the output's dims but the last; each
// output row reads X from start + o * step per dim, in one memcpy when the last step is 1.
#include <cstring>
#include <vector>

#include "runtime/kernel_registry.h"
#include "backends/cpu/runtime/element_type.h"
#include "ops/layout/slice.h"

namespace dnnx {

namespace {

template <class E>
class SliceKernel final : public Kernel {
 public:
  SliceKernel(Shape in, SliceRanges r) : r_(std::move(r)), in_strides_(in.size(), 1) {
    for (size_t d = in.size(); d-- > 1;) in_strides_[d - 1] = in_strides_[d] * in[d];
  }

  void run(const KernelArgs& args) const override {
    const E* x = args.in<E>(0);
    E* y = args.out<E>(0);
    const size_t rank = r_.out.size();
    const int64_t total = numel(r_.out);
    if (total == 0) return;
    if (rank == 0) {
      *y = *x;
      return;
    }
    const int64_t width = r_.out[rank - 1];
    const int64_t col0 = r_.start[rank - 1], col_step = r_.step[rank - 1];
    std::vector<int64_t> index(rank - 1, 0);
    for (int64_t at = 0; at < total; at += width) {
      int64_t src = col0;
      for (size_t d = 0; d + 1 < rank; ++d) src += (r_.start[d] + index[d] * r_.step[d]) * in_strides_[d];
      if (col_step == 1) {
        std::memcpy(y + at, x + src, static_cast<size_t>(width) * sizeof(E));
      } else {
        for (int64_t k = 0; k < width; ++k) y[at + k] = x[src + k * col_step];
      }
      for (size_t d = rank - 1; d-- > 0;) {
        if (++index[d] < r_.out[d]) break;
        index[d] = 0;
      }
    }
  }

 private:
  SliceRanges r_;
  Shape in_strides_;  // X's element strides
};

KernelChoice plan_slice(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  SliceRanges r = slice_ranges(node, inputs, x);
  KernelChoice choice;
  choice.algorithm = !r.step.empty() && r.step.back() != 1 ? "strided copy" : "row copy";
  choice.kernel = make_for_element_size<SliceKernel>(inputs[0].info.dtype, x, std::move(r));
  return choice;
}

}  // namespace

void register_cpu_slice_kernels(KernelRegistry& r) { r.add("Slice", plan_slice).with_dtypes(movable_types()); }

}  // namespace dnnx
