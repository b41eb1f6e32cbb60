// Add, Sub, Mul, Div on the CPU, on float32, int32 and int64 (integer arithmetic: the shape
// computations of dynamic exports, folded at plan time; Div truncates toward zero, as C++ and
// onnxruntime do, and a division by zero gives 0 rather than a crash). The broadcast is analysed once, at plan time: dims of size 1 in
// the output are dropped and neighbouring dims that broadcast the same way are merged, which
// leaves one of three loops:
//   elementwise        A and B have the output's shape (or one element each)
//   broadcast vector   one side is full, the other varies along at most one merged dim:
//                      a scalar, a bias [C,1,1] over [N,C,H,W] (outer N, mid C, inner H*W) or a
//                      row [1,10] over [N,10] (outer N, mid 10, inner 1)
//   broadcast strided  anything else: an index counter over the merged dims, each with a stride
//                      of 0 (broadcast) or its contiguous stride per side
#include <limits>
#include <type_traits>
#include <vector>

#include "backends/cpu/element_type.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum class BinaryOp { Add, Sub, Mul, Div };
enum class BinaryPath { Elementwise, Vector, Strided };

template <BinaryOp Op, class T>
inline T apply(T a, T b) {
  if constexpr (Op == BinaryOp::Add) return a + b;
  if constexpr (Op == BinaryOp::Sub) return a - b;
  if constexpr (Op == BinaryOp::Mul) return a * b;
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;                                               // no SIGFPE from a model
    if (b == -1) return a == std::numeric_limits<T>::min() ? a : -a;  // the one overflowing quotient
  }
  return a / b;
}

// y[i] = a[i * a_step] op b[i * b_step] for i < n, where each step is 0 (one repeated value) or 1.
template <BinaryOp Op, class T>
void span(const T* a, bool a_step, const T* b, bool b_step, T* y, int64_t n) {
  if (a_step && b_step) {
    for (int64_t i = 0; i < n; ++i) y[i] = apply<Op>(a[i], b[i]);
  } else if (a_step) {
    const T s = *b;
    for (int64_t i = 0; i < n; ++i) y[i] = apply<Op>(a[i], s);
  } else if (b_step) {
    const T s = *a;
    for (int64_t i = 0; i < n; ++i) y[i] = apply<Op>(s, b[i]);
  } else {
    const T v = apply<Op>(*a, *b);
    for (int64_t i = 0; i < n; ++i) y[i] = v;
  }
}

// One merged output dim and each side's element stride along it (0 where that side broadcasts).
struct MergedDim {
  int64_t size;
  int64_t stride_a;
  int64_t stride_b;
};

// The broadcast of A and B to `out` with size-1 dims dropped and like neighbours merged.
std::vector<MergedDim> merge_dims(const Shape& a, const Shape& b, const Shape& out) {
  const size_t rank = out.size();
  std::vector<MergedDim> dims;  // strides hold 1 (full) or 0 (broadcast) until the pass below
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    const int64_t da = d < rank - a.size() ? 1 : a[d - (rank - a.size())];
    const int64_t db = d < rank - b.size() ? 1 : b[d - (rank - b.size())];
    const MergedDim dim{out[d], da == out[d] ? 1 : 0, db == out[d] ? 1 : 0};
    if (!dims.empty() && dims.back().stride_a == dim.stride_a && dims.back().stride_b == dim.stride_b) {
      dims.back().size *= dim.size;
    } else {
      dims.push_back(dim);
    }
  }
  int64_t step_a = 1, step_b = 1;  // contiguous strides, innermost first
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    if (it->stride_a) {
      it->stride_a = step_a;
      step_a *= it->size;
    }
    if (it->stride_b) {
      it->stride_b = step_b;
      step_b *= it->size;
    }
  }
  return dims;
}

// The plan of one binary kernel: which loop, and the extents it needs.
struct BinaryPlan {
  BinaryPath path = BinaryPath::Elementwise;
  int64_t n = 0;  // output elements
  // Vector: the full side viewed as [outer, mid, inner], the small side as [mid].
  bool small_is_a = false;
  int64_t outer = 1, mid = 1, inner = 1;
  // Strided: the merged dims, outermost first.
  std::vector<MergedDim> dims;
};

// Vector fits when one side is full along every merged dim and the other along at most one.
bool plan_vector(const std::vector<MergedDim>& dims, BinaryPlan& plan) {
  for (const bool small_is_a : {false, true}) {
    int small_dims = 0;
    bool big_full = true;
    size_t at = 0;
    for (size_t i = 0; i < dims.size(); ++i) {
      big_full = big_full && (small_is_a ? dims[i].stride_b : dims[i].stride_a) != 0;
      if ((small_is_a ? dims[i].stride_a : dims[i].stride_b) != 0) {
        ++small_dims;
        at = i;
      }
    }
    if (!big_full || small_dims > 1) continue;
    plan.path = BinaryPath::Vector;
    plan.small_is_a = small_is_a;
    plan.inner = plan.n;
    if (small_dims == 1) {
      plan.outer = 1;
      for (size_t i = 0; i < at; ++i) plan.outer *= dims[i].size;
      plan.mid = dims[at].size;
      plan.inner = plan.n / (plan.outer * plan.mid);
    }
    return true;
  }
  return false;
}

BinaryPlan plan_binary(const Shape& a, const Shape& b, const Shape& out) {
  BinaryPlan plan;
  plan.n = numel(out);
  if (plan.n == 0) return plan;
  std::vector<MergedDim> dims = merge_dims(a, b, out);
  if (dims.empty() || (dims.size() == 1 && dims[0].stride_a && dims[0].stride_b)) return plan;
  if (plan_vector(dims, plan)) return plan;
  plan.path = BinaryPath::Strided;
  plan.dims = std::move(dims);
  return plan;
}

const char* path_name(const BinaryPlan& plan) {
  switch (plan.path) {
    case BinaryPath::Elementwise: return "elementwise";
    case BinaryPath::Vector: return plan.mid == 1 ? "broadcast scalar" : "broadcast vector";
    case BinaryPath::Strided: return "broadcast strided";
  }
  return "?";
}

template <BinaryOp Op, class T>
class BinaryKernel final : public Kernel {
 public:
  explicit BinaryKernel(BinaryPlan plan) : plan_(std::move(plan)) {}

  void run(const KernelArgs& args) const override {
    const T* a = args.in<T>(0);
    const T* b = args.in<T>(1);
    T* y = args.out<T>(0);
    switch (plan_.path) {
      case BinaryPath::Elementwise: span<Op>(a, true, b, true, y, plan_.n); break;
      case BinaryPath::Vector: run_vector(a, b, y); break;
      case BinaryPath::Strided: run_strided(a, b, y); break;
    }
  }

 private:
  // y[o, m, i] = big[o, m, i] op small[m] (or small[m] op big[o, m, i] when A is the small side).
  void run_vector(const T* a, const T* b, T* y) const {
    const T* big = plan_.small_is_a ? b : a;
    const T* small = plan_.small_is_a ? a : b;
    const bool a_small = plan_.small_is_a;
    const int64_t mid = plan_.mid, inner = plan_.inner;
    for (int64_t o = 0; o < plan_.outer; ++o) {
      if (inner == 1) {  // a row vector over [outer, mid]
        const T* row = big + o * mid;
        span<Op>(a_small ? small : row, true, a_small ? row : small, true, y + o * mid, mid);
        continue;
      }
      for (int64_t m = 0; m < mid; ++m) {
        const int64_t at = (o * mid + m) * inner;
        span<Op>(a_small ? small + m : big + at, !a_small, a_small ? big + at : small + m, a_small,
                 y + at, inner);
      }
    }
  }

  // An index counter over every merged dim but the innermost, which one span covers.
  void run_strided(const T* a, const T* b, T* y) const {
    const std::vector<MergedDim>& dims = plan_.dims;
    const size_t last = dims.size() - 1;
    const int64_t inner = dims[last].size;
    const bool a_step = dims[last].stride_a != 0, b_step = dims[last].stride_b != 0;
    std::vector<int64_t> index(last, 0);
    int64_t off_a = 0, off_b = 0;
    for (int64_t done = 0; done < plan_.n; done += inner) {
      span<Op>(a + off_a, a_step, b + off_b, b_step, y + done, inner);
      for (size_t d = last; d-- > 0;) {  // advance the counter, innermost outer dim first
        off_a += dims[d].stride_a;
        off_b += dims[d].stride_b;
        if (++index[d] < dims[d].size) break;
        off_a -= dims[d].stride_a * dims[d].size;
        off_b -= dims[d].stride_b * dims[d].size;
        index[d] = 0;
      }
    }
  }

  BinaryPlan plan_;
};

template <BinaryOp Op>
KernelChoice binary_factory(const Node&, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>& outputs) {
  BinaryPlan plan = plan_binary(inputs[0].info.shape, inputs[1].info.shape, outputs[0].shape);
  KernelChoice choice;
  choice.algorithm = path_name(plan);
  choice.kernel = with_dtype(outputs[0].dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<BinaryKernel<Op, decltype(t)>>(std::move(plan));
  });
  return choice;
}

}  // namespace

void register_cpu_binary_kernels(KernelRegistry& r) {
  r.add("Add", binary_factory<BinaryOp::Add>);
  r.add("Sub", binary_factory<BinaryOp::Sub>);
  r.add("Mul", binary_factory<BinaryOp::Mul>);
  r.add("Div", binary_factory<BinaryOp::Div>);
}

}  // namespace dnnx
