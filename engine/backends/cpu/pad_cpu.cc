// Pad (constant mode) on the CPU, for any element size: y is first filled with the constant,
// then every output row (the last dim) that maps to an input row takes its overlapping segment
// in one memcpy. Negative amounts crop: the same arithmetic, reading inside X.
#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/kernel_registry.h"
#include "backends/cpu/element_type.h"
#include "ops/pad.h"

namespace dnnx {

namespace {

constexpr int kPadsAsInputOpset = 11;
constexpr size_t kValueInput = 2;

struct PadGeometry {
  Shape in, out;
  PadAmounts pads;
  bool value_input = false;  // the fill value comes from input 2 at run time
  uint64_t value_bits = 0;   // otherwise: the fill value's bytes (element-sized)
};

template <class E>
class PadKernel final : public Kernel {
 public:
  explicit PadKernel(PadGeometry g) : g_(std::move(g)) {}

  void run(const KernelArgs& args) const override {
    const E* x = args.in<E>(0);
    E* y = args.out<E>(0);
    E value;
    if (g_.value_input) {
      std::memcpy(&value, args.in<E>(kValueInput), sizeof(E));
    } else {
      std::memcpy(&value, &g_.value_bits, sizeof(E));
    }
    std::fill(y, y + numel(g_.out), value);
    const size_t rank = g_.out.size();
    if (rank == 0) {
      *y = *x;
      return;
    }
    if (numel(g_.out) == 0 || numel(g_.in) == 0) return;
    // Columns of the last dim that overlap X: output [lo, hi) reads input [lo - begin, ...).
    const int64_t in_w = g_.in[rank - 1], out_w = g_.out[rank - 1], begin_w = g_.pads.begin[rank - 1];
    const int64_t lo = std::clamp<int64_t>(begin_w, 0, out_w);
    const int64_t hi = std::clamp<int64_t>(in_w + begin_w, lo, out_w);
    std::vector<int64_t> index(rank - 1, 0);  // the output row, over the dims before the last
    const int64_t rows = numel(g_.out) / out_w;
    for (int64_t row = 0; row < rows; ++row) {
      int64_t src = 0;  // the input row's element offset, or -1 when the row is all padding
      for (size_t d = 0; d + 1 < rank && src >= 0; ++d) {
        const int64_t i = index[d] - g_.pads.begin[d];
        src = (i < 0 || i >= g_.in[d]) ? -1 : src * g_.in[d] + i;
      }
      if (src >= 0 && hi > lo) {
        std::memcpy(y + row * out_w + lo, x + src * in_w + (lo - begin_w), static_cast<size_t>(hi - lo) * sizeof(E));
      }
      for (size_t d = rank - 1; d-- > 0;) {
        if (++index[d] < g_.out[d]) break;
        index[d] = 0;
      }
    }
  }

 private:
  PadGeometry g_;
};

KernelChoice plan_pad(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  PadGeometry g;
  g.in = inputs[0].info.shape;
  g.out = outputs[0].shape;
  g.pads = pad_amounts(node, inputs, g.in.size());
  const DType dtype = inputs[0].info.dtype;
  g.value_input = node.opset >= kPadsAsInputOpset && kValueInput < inputs.size() && inputs[kValueInput].present;
  if (!g.value_input) {
    with_dtype(dtype, [&](auto t) {
      using T = decltype(t);
      const T value = static_cast<T>(node.opset < kPadsAsInputOpset ? node.attr_float("value", 0.0f) : 0.0f);
      std::memcpy(&g.value_bits, &value, sizeof(T));
    });
  }
  KernelChoice choice;
  choice.algorithm = "fill+copy";
  choice.kernel = make_for_element_size<PadKernel>(dtype, std::move(g));
  return choice;
}

}  // namespace

void register_cpu_pad_kernels(KernelRegistry& r) { r.add("Pad", plan_pad); }

}  // namespace dnnx
