// One broadcasting loop for every binary elementwise op on the CPU (Add, Sub, Mul, Div, Mod, the
// comparisons, And, Or, Xor): y = fn(a, b), In -> Out, fn a functor. The broadcast is analysed
// once, at plan time: dims of size 1 in the output are dropped and neighbouring dims that
// broadcast the same way are merged, which leaves one of three loops:
//   elementwise        A and B have the output's shape (or one element each)
//   broadcast vector   one side is full, the other varies along at most one merged dim:
//                      a scalar, a bias [C,1,1] over [N,C,H,W] (outer N, mid C, inner H*W) or a
//                      row [1,10] over [N,10] (outer N, mid 10, inner 1)
//   broadcast strided  anything else: an index counter over the merged dims, each with a stride
//                      of 0 (broadcast) or its contiguous stride per side
#pragma once
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "backends/cpu/runtime/thread_pool.h"
#include "runtime/backend.h"

namespace dnnx {

enum class BinaryPath { Elementwise, Vector, Strided };

// One merged output dim and each side's element stride along it (0 where that side broadcasts).
struct MergedDim {
  int64_t size;
  int64_t stride_a;
  int64_t stride_b;
};

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

// The plan for A [a] op B [b] -> [out] (out = broadcast(a, b)).
BinaryPlan plan_binary(const Shape& a, const Shape& b, const Shape& out);
// "elementwise", "broadcast scalar", "broadcast vector" or "broadcast strided".
const char* path_name(const BinaryPlan& plan);

// Note [parallel binary]: the elementwise and vector loops split across the CPU pool in pieces
// fixed by the shape (kBinaryChunk elements, or whole rows and planes of the vector form), each
// element computed alone: the same bits for any thread count. (A squeeze-and-excitation gate's
// broadcast Mul over [1, 112, 112, 96] took 0.45 ms on one thread and more on two.)
constexpr int64_t kBinaryChunk = 16384;

// The pieces a plan's loop splits into (1: none).
inline int64_t binary_pieces(const BinaryPlan& plan) {
  if (plan.path == BinaryPath::Elementwise) return (plan.n + kBinaryChunk - 1) / kBinaryChunk;
  if (plan.path == BinaryPath::Vector) return plan.inner == 1 ? plan.outer : plan.outer * plan.mid;
  return 1;
}

template <class In, class Out, class Fn>
class BroadcastBinaryKernel final : public Kernel {
 public:
  BroadcastBinaryKernel(BinaryPlan plan, Fn fn, int workers = 1)
      : plan_(std::move(plan)), fn_(fn), workers_(workers) {}

  void run(const KernelArgs& args) const override {
    const In* a = args.in<In>(0);
    const In* b = args.in<In>(1);
    Out* y = args.out<Out>(0);
    switch (plan_.path) {
      case BinaryPath::Elementwise:
        if (workers_ > 1) {
          cpu_thread_pool().parallel_for(binary_pieces(plan_), [&](int64_t begin, int64_t end, int) {
            const int64_t first = begin * kBinaryChunk, last = std::min(plan_.n, end * kBinaryChunk);
            span(a + first, true, b + first, true, y + first, last - first);
          }, workers_);
          break;
        }
        span(a, true, b, true, y, plan_.n);
        break;
      case BinaryPath::Vector:
        if (workers_ > 1) {
          cpu_thread_pool().parallel_for(binary_pieces(plan_), [&](int64_t begin, int64_t end, int) {
            for (int64_t piece = begin; piece < end; ++piece) run_piece(a, b, y, piece);
          }, workers_);
          break;
        }
        run_vector(a, b, y);
        break;
      case BinaryPath::Strided: run_strided(a, b, y); break;
    }
  }

 private:
  // y[i] = fn(a[i * a_step], b[i * b_step]) for i < n, where each step is 0 (one repeated value) or 1.
  void span(const In* a, bool a_step, const In* b, bool b_step, Out* y, int64_t n) const {
    const Fn fn = fn_;
    if (a_step && b_step) {
      for (int64_t i = 0; i < n; ++i) y[i] = fn(a[i], b[i]);
    } else if (a_step) {
      const In s = *b;
      for (int64_t i = 0; i < n; ++i) y[i] = fn(a[i], s);
    } else if (b_step) {
      const In s = *a;
      for (int64_t i = 0; i < n; ++i) y[i] = fn(s, b[i]);
    } else {
      const Out v = fn(*a, *b);
      for (int64_t i = 0; i < n; ++i) y[i] = v;
    }
  }

  // y[o, m, i] = big[o, m, i] op small[m] (or small[m] op big[o, m, i] when A is the small side).
  void run_vector(const In* a, const In* b, Out* y) const {
    const In* big = plan_.small_is_a ? b : a;
    const In* small = plan_.small_is_a ? a : b;
    const bool a_small = plan_.small_is_a;
    const int64_t mid = plan_.mid, inner = plan_.inner;
    for (int64_t o = 0; o < plan_.outer; ++o) {
      if (inner == 1) {  // a row vector over [outer, mid]
        const In* row = big + o * mid;
        span(a_small ? small : row, true, a_small ? row : small, true, y + o * mid, mid);
        continue;
      }
      for (int64_t m = 0; m < mid; ++m) {
        const int64_t at = (o * mid + m) * inner;
        span(a_small ? small + m : big + at, !a_small, a_small ? big + at : small + m, a_small, y + at, inner);
      }
    }
  }

  // One piece of the vector loop: row o (inner 1) or plane (o, m) of [outer, mid, inner].
  void run_piece(const In* a, const In* b, Out* y, int64_t piece) const {
    const In* big = plan_.small_is_a ? b : a;
    const In* small = plan_.small_is_a ? a : b;
    const bool a_small = plan_.small_is_a;
    const int64_t mid = plan_.mid, inner = plan_.inner;
    if (inner == 1) {
      const In* row = big + piece * mid;
      span(a_small ? small : row, true, a_small ? row : small, true, y + piece * mid, mid);
      return;
    }
    const int64_t m = piece % mid, at = piece * inner;
    span(a_small ? small + m : big + at, !a_small, a_small ? big + at : small + m, a_small, y + at, inner);
  }

  // An index counter over every merged dim but the innermost, which one span covers.
  void run_strided(const In* a, const In* b, Out* y) const {
    const std::vector<MergedDim>& dims = plan_.dims;
    const size_t last = dims.size() - 1;
    const int64_t inner = dims[last].size;
    const bool a_step = dims[last].stride_a != 0, b_step = dims[last].stride_b != 0;
    std::vector<int64_t> index(last, 0);
    int64_t off_a = 0, off_b = 0;
    for (int64_t done = 0; done < plan_.n; done += inner) {
      span(a + off_a, a_step, b + off_b, b_step, y + done, inner);
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
  Fn fn_;
  int workers_;  // Note [parallel binary]
};

// The kernel and its choice for a binary node: inputs 0 and 1 of type In, output 0 of type Out.
template <class In, class Out, class Fn>
KernelChoice broadcast_binary_choice(const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs,
                                     Fn fn) {
  BinaryPlan plan = plan_binary(inputs[0].info.shape, inputs[1].info.shape, outputs[0].shape);
  const int64_t pieces = binary_pieces(plan);
  const int workers = pieces > 1 ? plan_workers(pieces, plan.n / pieces) : 1;
  KernelChoice choice;
  choice.algorithm = with_threads(path_name(plan), workers);
  choice.kernel = std::make_unique<BroadcastBinaryKernel<In, Out, Fn>>(std::move(plan), fn, workers);
  return choice;
}

}  // namespace dnnx
