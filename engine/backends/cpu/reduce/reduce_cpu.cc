// The Reduce* ops on the CPU, forward and gradient.
// ReduceMean: X's dims are merged into alternating runs of kept and reduced dims; a counter
// walks X in order, adding each element into its output cell (the output stride of a reduced
// run is 0; an innermost reduced run is summed first, Note [lane sums]), and the sums are
// scaled by 1 / (elements per cell) at the end.
// The others (templated over the element type), and every gradient, walk cells (ReduceCells):
// output cell i reads X at base[i] + red[j] for each of its `count` reduced elements j, in X's
// order, as the CUDA kernels do (elementwise/reduce_kernels.cu). The gradients, from X, Y and dY of each cell:
//   Mean dy / count    Sum dy    L2 dy * x / y (0 where y is 0)    L1 dy * sign(x)
//   SumSquare 2 x dy   LogSum dy / e^y   LogSumExp dy * e^(x - y)
//   Max, Min   dy split evenly between the elements equal to y (PyTorch's amax rule)
//   Prod       dy * (the product of the others): y / x without zeros, else from the non-zeros
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "backends/cpu/reduce/reduce_cells.h"
#include "backends/cpu/reduce/reduce_grad_cpu.h"
#include "backends/cpu/runtime/element_type.h"
#include "ops/reduce/reduce.h"
#include "runtime/kernel_registry.h"

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

// Note [lane sums]: the sum of a contiguous run in 16 independent partial sums, folded in a fixed
// order (halves added pairwise), then the tail: one chain of dependent adds ran at one add per
// FP latency (ReduceMean over 56x56 planes, a squeeze-and-excitation's: 156 us against
// onnxruntime's 25 for [1, 96, 56, 56], one thread); the lanes vectorize. Deterministic (the
// order is fixed by n alone), not the order of a plain loop: a few ulp from it.
float lane_sum(const float* x, int64_t n) {
  constexpr int kLanes = 16;
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] += x[i + l];
  }
  for (int w = kLanes / 2; w > 0; w /= 2) {
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  }
  float s = acc[0];
  for (; i < n; ++i) s += x[i];
  return s;
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
        y[out] += lane_sum(x + at, inner);
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

template <class T>
T reduce_identity(ReduceKind kind) {
  using L = std::numeric_limits<T>;
  switch (kind) {
    case ReduceKind::Prod: return T(1);
    case ReduceKind::Max: return L::has_infinity ? -L::infinity() : L::lowest();
    case ReduceKind::Min: return L::has_infinity ? L::infinity() : L::max();
    default: return T(0);
  }
}

// LogSumExp of one cell: max + log(sum e^(x - max)); an infinite or empty max is the answer.
template <class T>
T log_sum_exp(const T* cell, const std::vector<int64_t>& red) {
  T top = -std::numeric_limits<T>::infinity();
  for (int64_t r : red) top = std::max(top, cell[r]);
  if (!std::isfinite(top)) return top;
  T sum = 0;
  for (int64_t r : red) sum += std::exp(cell[r] - top);
  return top + std::log(sum);
}

// T: float32; an integer type for ReduceL1, ReduceSumSquare, ReduceMax and ReduceMin; bool for
// ReduceMax (any) and ReduceMin (all) (the OpDef refuses the rest).
template <class T>
class ReduceCellKernel final : public Kernel {
 public:
  ReduceCellKernel(ReduceKind kind, ReduceCells c) : kind_(kind), c_(std::move(c)) {
    contiguous_ = !c_.red.empty();  // red = 0, 1, 2, ...: a cell is one run of X
    for (size_t j = 0; j < c_.red.size() && contiguous_; ++j) contiguous_ = c_.red[j] == static_cast<int64_t>(j);
  }

  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    for (size_t i = 0; i < c_.base.size(); ++i) y[i] = cell(x + c_.base[i]);
  }

 private:
  T cell(const T* cell) const {
    if constexpr (std::is_same_v<T, bool>) {  // Max: any (false when empty), Min: all (true when empty)
      const bool all = kind_ == ReduceKind::Min;
      for (int64_t r : c_.red) {
        if (cell[r] != all) return !all;
      }
      return all;
    } else {
      return number_cell(cell);
    }
  }

  T number_cell(const T* cell) const {
    if constexpr (std::is_same_v<T, float>) {
      // Note [lane sums]: a float ReduceSum over a run of X (a softmax's denominator, written out)
      if (kind_ == ReduceKind::Sum && contiguous_) return lane_sum(cell, static_cast<int64_t>(c_.red.size()));
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (kind_ == ReduceKind::LogSumExp) return log_sum_exp(cell, c_.red);
    }
    T acc = reduce_identity<T>(kind_);
    for (int64_t r : c_.red) {
      const T v = cell[r];
      switch (kind_) {
        case ReduceKind::Max: acc = std::max(acc, v); break;
        case ReduceKind::Min: acc = std::min(acc, v); break;
        case ReduceKind::Prod: acc *= v; break;
        case ReduceKind::L2:
        case ReduceKind::SumSquare: acc += v * v; break;
        case ReduceKind::L1: acc += v < T(0) ? -v : v; break;
        default: acc += v; break;
      }
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (kind_ == ReduceKind::L2) acc = std::sqrt(acc);
      if (kind_ == ReduceKind::LogSum) acc = std::log(acc);
      // An empty cell keeps the identity; its mean is 0, as onnxruntime gives (Note [empty tensors]).
      if (kind_ == ReduceKind::Mean && !c_.red.empty()) acc /= static_cast<T>(c_.red.size());
    }
    return acc;
  }

  ReduceKind kind_;
  ReduceCells c_;
  bool contiguous_ = false;
};

class ReduceGradKernel final : public GradKernel {
 public:
  ReduceGradKernel(ReduceKind kind, ReduceCells c) : kind_(kind), c_(std::move(c)) {}

  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float* x = args.in(0);
    const float* y = args.out(0);
    const float* dy = args.d_outputs[0];
    for (size_t i = 0; i < c_.base.size(); ++i) cell(x + c_.base[i], y[i], dy[i], dx + c_.base[i]);
  }

 private:
  void cell(const float* x, float y, float dy, float* dx) const {
    switch (kind_) {
      case ReduceKind::Mean:
      case ReduceKind::Sum: {
        const float g = kind_ == ReduceKind::Mean ? dy / static_cast<float>(c_.red.size()) : dy;
        for (int64_t r : c_.red) dx[r] = g;
        break;
      }
      case ReduceKind::L2:
        for (int64_t r : c_.red) dx[r] = y == 0.0f ? 0.0f : dy * x[r] / y;
        break;
      case ReduceKind::L1:  // the subgradient 0 at x = 0
        for (int64_t r : c_.red) dx[r] = x[r] > 0.0f ? dy : x[r] < 0.0f ? -dy : 0.0f;
        break;
      case ReduceKind::SumSquare:
        for (int64_t r : c_.red) dx[r] = 2.0f * x[r] * dy;
        break;
      case ReduceKind::LogSum: {  // d log(s) / dx = 1 / s, s = e^y
        const float g = dy / std::exp(y);
        for (int64_t r : c_.red) dx[r] = g;
        break;
      }
      case ReduceKind::LogSumExp:  // softmax of the cell: e^(x - y)
        for (int64_t r : c_.red) dx[r] = dy * std::exp(x[r] - y);
        break;
      case ReduceKind::Max:
      case ReduceKind::Min: {
        int64_t ties = 0;
        for (int64_t r : c_.red) ties += x[r] == y;
        const float g = ties ? dy / static_cast<float>(ties) : 0.0f;
        for (int64_t r : c_.red) dx[r] = x[r] == y ? g : 0.0f;
        break;
      }
      case ReduceKind::Prod: {
        int64_t zeros = 0;
        float others = 1.0f;  // the product of the non-zero elements
        for (int64_t r : c_.red) {
          if (x[r] == 0.0f) {
            ++zeros;
          } else {
            others *= x[r];
          }
        }
        for (int64_t r : c_.red) {
          if (zeros == 0) {
            dx[r] = dy * y / x[r];
          } else {
            dx[r] = zeros == 1 && x[r] == 0.0f ? dy * others : 0.0f;
          }
        }
        break;
      }
    }
  }

  ReduceKind kind_;
  ReduceCells c_;
};

KernelChoice plan_reduce(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const ReduceAxes axes = reduce_axes(node, inputs, x);
  KernelChoice choice;
  choice.algorithm = "cells";
  const ReduceKind kind = reduce_kind(node.op_type);
  ReduceCells cells = reduce_cells(x, axes.reduced);
  choice.kernel = with_number_or_bool(inputs[0].info.dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<ReduceCellKernel<decltype(t)>>(kind, std::move(cells));
  });
  return choice;
}

GradChoice plan_reduce_grad(const GradRequest& r) {
  const Shape& x = r.inputs[0].info.shape;
  return plan_reduction_grad(reduce_kind(r.node.op_type), x, reduce_axes(r.node, r.inputs, x).reduced);
}

KernelChoice plan_reduce_mean(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const ReduceAxes axes = reduce_axes(node, inputs, x);
  KernelChoice choice;
  choice.algorithm = "accumulate";
  choice.kernel = std::make_unique<ReduceMeanKernel>(reduce_walk(x, axes.reduced));
  return choice;
}

}  // namespace

GradChoice plan_reduction_grad(ReduceKind kind, const Shape& x, const std::vector<bool>& reduced) {
  GradChoice choice;
  choice.algorithm = "cells";
  choice.kernel = std::make_unique<ReduceGradKernel>(kind, reduce_cells(x, reduced));
  return choice;
}

void register_cpu_reduce_kernels(KernelRegistry& r) {
  r.add("ReduceMean", plan_reduce_mean).with_gradient(plan_reduce_grad);
  for (const char* op : {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", /* issue #35: */
                         "ReduceL1", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"}) {
    r.add(op, plan_reduce).with_gradient(plan_reduce_grad);
  }
  // issue #35: the integer types (their OpDefs take them; float64 and the halves are widened)
  std::vector<DType> integers = {DType::Float32};
  for (DType t : number_types()) {
    if (is_integer(t)) integers.push_back(t);
  }
  for (const char* op : {"ReduceMax", "ReduceMin", "ReduceL1", "ReduceSumSquare", "ReduceSum", "ReduceProd"}) {
    r.at(op).with_dtypes(integers);
  }
}

}  // namespace dnnx
