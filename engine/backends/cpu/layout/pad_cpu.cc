// Pad on the CPU, for any element size. Constant mode: y is first filled with the constant, then
// every output row (the last dim) that maps to an input row takes its overlapping segment in one
// memcpy. Negative amounts crop: the same arithmetic, reading inside X. Edge, reflect and wrap
// gather: per dim, a table of the input index each output index reads (ops/layout/pad.h), walked row
// by row. The gradient (float32, every mode) scatter-adds dY back through the same tables.
#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/kernel_registry.h"
#include "backends/cpu/runtime/element_type.h"
#include "ops/layout/pad.h"

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

// Per dim d, source[d][o]: the input index output index o reads, -1 for a constant cell.
using SourceTables = std::vector<std::vector<int64_t>>;

SourceTables source_tables(PadMode mode, const Shape& in, const Shape& out, const PadAmounts& pads) {
  SourceTables t(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    t[d].resize(static_cast<size_t>(out[d]));
    for (int64_t o = 0; o < out[d]; ++o) t[d][o] = pad_source_index(mode, o, in[d], pads.begin[d], pads.end[d]);
  }
  return t;
}

// Calls f(output row, input row's element offset or -1) for every row of the output (the dims
// before the last), in order.
template <class F>
void for_each_row(const Shape& in, const Shape& out, const SourceTables& t, F&& f) {
  const size_t rank = out.size();
  const int64_t rows = numel(out) / out[rank - 1];
  std::vector<int64_t> index(rank - 1, 0);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t src = 0;
    for (size_t d = 0; d + 1 < rank && src >= 0; ++d) {
      const int64_t i = t[d][index[d]];
      src = i < 0 ? -1 : src * in[d] + i;
    }
    f(row, src);
    for (size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < out[d]) break;
      index[d] = 0;
    }
  }
}

// Edge, reflect and wrap: every output element is a copy of one input element.
template <class E>
class PadGatherKernel final : public Kernel {
 public:
  PadGatherKernel(Shape in, Shape out, SourceTables t) : in_(std::move(in)), out_(std::move(out)), t_(std::move(t)) {}

  void run(const KernelArgs& args) const override {
    const E* x = args.in<E>(0);
    E* y = args.out<E>(0);
    const size_t rank = out_.size();
    if (numel(out_) == 0) return;
    if (rank == 0) {
      *y = *x;
      return;
    }
    const int64_t in_w = in_[rank - 1], out_w = out_[rank - 1];
    const std::vector<int64_t>& cols = t_[rank - 1];
    for_each_row(in_, out_, t_, [&](int64_t row, int64_t src) {
      const E* x_row = x + src * in_w;
      E* y_row = y + row * out_w;
      for (int64_t j = 0; j < out_w; ++j) y_row[j] = x_row[cols[j]];
    });
  }

 private:
  Shape in_, out_;
  SourceTables t_;
};

// dX: every dY element added to the X element it copies (several, where reflect or wrap reach
// past one period, or edge repeats); constant cells add to the constant_value input's gradient.
class PadGradKernel final : public GradKernel {
 public:
  PadGradKernel(Shape in, Shape out, SourceTables t, bool value_input)
      : in_(std::move(in)), out_(std::move(out)), t_(std::move(t)), value_input_(value_input) {}

  void run(const GradArgs& args) const override {
    const float* dy = args.d_outputs[0];
    float* dx = args.d_inputs[0];
    float* d_value = value_input_ ? args.d_inputs[kValueInput] : nullptr;
    if (dx) std::fill(dx, dx + numel(in_), 0.0f);
    double value_sum = 0.0;
    const size_t rank = out_.size();
    if (rank == 0) {
      if (dx) *dx = *dy;
    } else if (numel(out_) > 0) {
      const int64_t in_w = in_[rank - 1], out_w = out_[rank - 1];
      const std::vector<int64_t>& cols = t_[rank - 1];
      for_each_row(in_, out_, t_, [&](int64_t row, int64_t src) {
        const float* dy_row = dy + row * out_w;
        for (int64_t j = 0; j < out_w; ++j) {
          if (src >= 0 && cols[j] >= 0) {
            if (dx) dx[src * in_w + cols[j]] += dy_row[j];
          } else {
            value_sum += dy_row[j];
          }
        }
      });
    }
    if (d_value) *d_value = static_cast<float>(value_sum);
  }

 private:
  Shape in_, out_;
  SourceTables t_;
  bool value_input_;  // the node has a constant_value input (its gradient: the constant cells' sum)
};

GradChoice plan_pad_grad(const GradRequest& r) {
  const Shape& in = r.inputs[0].info.shape;
  const Shape& out = r.outputs[0].shape;
  const PadMode mode = pad_mode(r.node);
  GradChoice choice;
  choice.algorithm = "scatter-add";
  SourceTables t = source_tables(mode, in, out, pad_amounts(r.node, r.inputs, in.size()));
  const bool value_input =
      r.node.opset >= kPadsAsInputOpset && kValueInput < r.inputs.size() && r.inputs[kValueInput].present;
  choice.kernel = std::make_unique<PadGradKernel>(in, out, std::move(t), value_input);
  return choice;
}

KernelChoice plan_pad(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  const DType dtype = inputs[0].info.dtype;
  const PadMode mode = pad_mode(node);
  if (mode != PadMode::Constant) {
    const Shape& in = inputs[0].info.shape;
    const Shape& out = outputs[0].shape;
    SourceTables t = source_tables(mode, in, out, pad_amounts(node, inputs, in.size()));
    KernelChoice choice;
    choice.algorithm = "gather";
    choice.kernel = make_for_element_size<PadGatherKernel>(dtype, in, out, std::move(t));
    return choice;
  }
  PadGeometry g;
  g.in = inputs[0].info.shape;
  g.out = outputs[0].shape;
  g.pads = pad_amounts(node, inputs, g.in.size());
  g.value_input = node.opset >= kPadsAsInputOpset && kValueInput < inputs.size() && inputs[kValueInput].present;
  if (!g.value_input) {
    with_number(dtype, [&](auto t) {
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

void register_cpu_pad_kernels(KernelRegistry& r) { r.add("Pad", plan_pad).with_dtypes(number_types()).with_gradient(plan_pad_grad); }

}  // namespace dnnx
