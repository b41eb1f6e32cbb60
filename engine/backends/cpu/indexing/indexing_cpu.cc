// The indexing ops on the CPU (ops/indexing/indexing.h), forward and gradient side by side:
//   GatherElements  out[p] = data[p with p[axis] = idx[p]]        grad: scatter-add of dY into dData
//   ScatterND       out = data, then each index tuple's slice replaced / combined with updates
//   Tile            out[p] = x[p mod x's dims]                     grad: dX = the sum over the tiles
//   TopK            per [outer, inner] line: a partial sort of the indices (ties: lower first)
//                   grad: dY of the values scattered to their indices
//   ArgMax, ArgMin  per line: the first (or, select_last_index, the last) extreme
// Indices are read as the kernels run and checked; an index out of range is an InputError.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "backends/cpu/runtime/element_type.h"
#include "ops/indexing/indexing.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

int64_t read_index(const void* p, DType t, int64_t i) {
  return t == DType::Int32 ? static_cast<const int32_t*>(p)[i] : static_cast<const int64_t*>(p)[i];
}

int64_t checked(const std::string& where, int64_t raw, int64_t size) {
  const int64_t i = raw < 0 ? raw + size : raw;
  if (i < 0 || i >= size) {
    throw InputError(where + ": index " + std::to_string(raw) + " is out of range for a dim of size " +
                     std::to_string(size));
  }
  return i;
}

// --- GatherElements --------------------------------------------------------------------------
struct GatherElementsShape {
  Shape data, indices;
  int64_t axis = 0;
  DType index_type = DType::Int64;
  std::string where;
};

// Calls fn(out_index, data_index) for each element of the output.
template <class Fn>
void each_gathered(const GatherElementsShape& s, const void* idx, Fn&& fn) {
  const std::vector<int64_t> ds = packed_strides(s.data);
  const size_t rank = s.indices.size();
  std::vector<int64_t> at(rank, 0);
  const int64_t n = numel(s.indices);
  for (int64_t o = 0; o < n; ++o) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t c = static_cast<int64_t>(d) == s.axis
                            ? checked(s.where, read_index(idx, s.index_type, o), s.data[d])
                            : at[d];
      src += c * ds[d];
    }
    fn(o, src);
    for (size_t d = rank; d-- > 0;) {
      if (++at[d] < s.indices[d]) break;
      at[d] = 0;
    }
  }
}

template <class E>
class GatherElementsKernel final : public Kernel {
 public:
  explicit GatherElementsKernel(GatherElementsShape s) : s_(std::move(s)) {}
  void run(const KernelArgs& args) const override {
    const E* x = args.in<E>(0);
    E* y = args.out<E>(0);
    each_gathered(s_, args.inputs[1], [&](int64_t o, int64_t i) { y[o] = x[i]; });
  }

 private:
  GatherElementsShape s_;
};

GatherElementsShape gather_elements_shape(const Node& node, const std::vector<ValueInfo>& inputs) {
  GatherElementsShape s;
  s.data = inputs[0].info.shape;
  s.indices = inputs[1].info.shape;
  s.axis = normalize_axis(node, node.attr_int("axis", 0), static_cast<int64_t>(s.data.size()));
  s.index_type = inputs[1].info.dtype;
  s.where = node.where();
  return s;
}

KernelChoice plan_gather_elements(const Node& node, const std::vector<ValueInfo>& inputs,
                                  const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "gather";
  choice.kernel = make_for_element_size<GatherElementsKernel>(inputs[0].info.dtype, gather_elements_shape(node, inputs));
  return choice;
}

class GatherElementsGradKernel final : public GradKernel {
 public:
  explicit GatherElementsGradKernel(GatherElementsShape s) : s_(std::move(s)) {}
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float* dy = args.d_outputs[0];
    std::fill(dx, dx + numel(s_.data), 0.0f);
    each_gathered(s_, args.inputs[1], [&](int64_t o, int64_t i) { dx[i] += dy[o]; });
  }

 private:
  GatherElementsShape s_;
};

GradChoice plan_gather_elements_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "scatter-add";
  choice.kernel = std::make_unique<GatherElementsGradKernel>(gather_elements_shape(r.node, r.inputs));
  return choice;
}

// --- ScatterND -------------------------------------------------------------------------------
struct ScatterShape {
  int64_t tuples = 0, k = 0, slice = 1, total = 0;
  Shape data;
  DType index_type = DType::Int64;
  ScatterReduction reduction = ScatterReduction::None;
  std::string where;
};

template <class T>
class ScatterNDKernel final : public Kernel {
 public:
  explicit ScatterNDKernel(ScatterShape s) : s_(std::move(s)) {}
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    const T* u = args.in<T>(2);
    T* y = args.out<T>(0);
    if (y != x) std::memcpy(y, x, static_cast<size_t>(s_.total) * sizeof(T));
    const std::vector<int64_t> ds = packed_strides(s_.data);
    for (int64_t t = 0; t < s_.tuples; ++t) {
      int64_t at = 0;
      for (int64_t j = 0; j < s_.k; ++j) {
        at += checked(s_.where, read_index(args.inputs[1], s_.index_type, t * s_.k + j), s_.data[j]) * ds[j];
      }
      T* dst = y + at;
      const T* src = u + t * s_.slice;
      for (int64_t e = 0; e < s_.slice; ++e) {
        switch (s_.reduction) {
          case ScatterReduction::None: dst[e] = src[e]; break;
          case ScatterReduction::Add: dst[e] += src[e]; break;
          case ScatterReduction::Mul: dst[e] *= src[e]; break;
          case ScatterReduction::Max: dst[e] = std::max(dst[e], src[e]); break;
          case ScatterReduction::Min: dst[e] = std::min(dst[e], src[e]); break;
        }
      }
    }
  }

 private:
  ScatterShape s_;
};

KernelChoice plan_scatter_nd(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  ScatterShape s;
  s.data = inputs[0].info.shape;
  const Shape& idx = inputs[1].info.shape;
  s.k = idx.back();
  s.tuples = numel(Shape(idx.begin(), idx.end() - 1));
  s.slice = numel(Shape(s.data.begin() + s.k, s.data.end()));
  s.total = numel(s.data);
  s.index_type = inputs[1].info.dtype;
  s.reduction = scatter_reduction(node);
  s.where = node.where();
  KernelChoice choice;
  choice.algorithm = "copy+scatter";
  choice.kernel = with_dtype(inputs[0].info.dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<ScatterNDKernel<decltype(t)>>(s);
  });
  return choice;
}

// --- Tile ------------------------------------------------------------------------------------
struct TileShape {
  Shape in, out;
};

// Calls fn(out_index, in_index) for every output element.
template <class Fn>
void each_tiled(const TileShape& s, Fn&& fn) {
  const std::vector<int64_t> is = packed_strides(s.in);
  const size_t rank = s.out.size();
  std::vector<int64_t> at(rank, 0);
  const int64_t n = numel(s.out);
  for (int64_t o = 0; o < n; ++o) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) src += (at[d] % s.in[d]) * is[d];
    fn(o, src);
    for (size_t d = rank; d-- > 0;) {
      if (++at[d] < s.out[d]) break;
      at[d] = 0;
    }
  }
}

template <class E>
class TileKernel final : public Kernel {
 public:
  explicit TileKernel(TileShape s) : s_(std::move(s)) {}
  void run(const KernelArgs& args) const override {
    const E* x = args.in<E>(0);
    E* y = args.out<E>(0);
    each_tiled(s_, [&](int64_t o, int64_t i) { y[o] = x[i]; });
  }

 private:
  TileShape s_;
};

KernelChoice plan_tile(const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  KernelChoice choice;
  choice.algorithm = "tile copy";
  choice.kernel = make_for_element_size<TileKernel>(inputs[0].info.dtype, TileShape{inputs[0].info.shape, outputs[0].shape});
  return choice;
}

class TileGradKernel final : public GradKernel {
 public:
  explicit TileGradKernel(TileShape s) : s_(std::move(s)) {}
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float* dy = args.d_outputs[0];
    std::fill(dx, dx + numel(s_.in), 0.0f);
    each_tiled(s_, [&](int64_t o, int64_t i) { dx[i] += dy[o]; });
  }

 private:
  TileShape s_;
};

GradChoice plan_tile_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "sum over tiles";
  choice.kernel = std::make_unique<TileGradKernel>(TileShape{r.inputs[0].info.shape, r.outputs[0].shape});
  return choice;
}

// --- TopK ------------------------------------------------------------------------------------
struct TopKShape {
  AxisView v;
  int64_t k = 0;
  bool largest = true;
};

template <class T>
class TopKKernel final : public Kernel {
 public:
  explicit TopKKernel(TopKShape s) : s_(s) {}
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    T* values = args.out<T>(0);
    int64_t* indices = args.out<int64_t>(1);
    const AxisView& v = s_.v;
    std::vector<int64_t> order(v.size);
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t in = 0; in < v.inner; ++in) {
        const T* line = x + o * v.size * v.inner + in;
        std::iota(order.begin(), order.end(), 0);
        const auto before = [&](int64_t a, int64_t b) {
          const T va = line[a * v.inner], vb = line[b * v.inner];
          if (va != vb) return s_.largest ? va > vb : va < vb;
          return a < b;
        };
        std::partial_sort(order.begin(), order.begin() + s_.k, order.end(), before);
        for (int64_t j = 0; j < s_.k; ++j) {
          const int64_t at = (o * s_.k + j) * v.inner + in;
          values[at] = line[order[j] * v.inner];
          if (indices) indices[at] = order[j];
        }
      }
    }
  }

 private:
  TopKShape s_;
};

TopKShape topk_shape(const Node& node, const std::vector<ValueInfo>& inputs) {
  const Shape& x = inputs[0].info.shape;
  TopKShape s;
  s.v = axis_view(x, normalize_axis(node, node.attr_int("axis", -1), static_cast<int64_t>(x.size())));
  s.k = topk_k(node, inputs);
  s.largest = node.attr_int("largest", 1) != 0;
  return s;
}

KernelChoice plan_topk(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const TopKShape s = topk_shape(node, inputs);
  KernelChoice choice;
  choice.algorithm = "partial sort";
  choice.kernel = with_dtype(inputs[0].info.dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<TopKKernel<decltype(t)>>(s);
  });
  return choice;
}

class TopKGradKernel final : public GradKernel {
 public:
  TopKGradKernel(TopKShape s) : s_(s) {}
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx || !args.d_outputs[0]) {
      if (dx) std::fill(dx, dx + s_.v.outer * s_.v.size * s_.v.inner, 0.0f);
      return;
    }
    const float* dy = args.d_outputs[0];
    const auto* indices = static_cast<const int64_t*>(args.outputs[1]);
    const AxisView& v = s_.v;
    std::fill(dx, dx + v.outer * v.size * v.inner, 0.0f);
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t j = 0; j < s_.k; ++j) {
        for (int64_t in = 0; in < v.inner; ++in) {
          const int64_t at = (o * s_.k + j) * v.inner + in;
          dx[(o * v.size + indices[at]) * v.inner + in] += dy[at];
        }
      }
    }
  }

 private:
  TopKShape s_;
};

GradChoice plan_topk_grad(const GradRequest& r) {
  if (!r.node.has_output(1)) node_fail<UnsupportedModelError>(r.node, "TopK's gradient reads its Indices output");
  GradChoice choice;
  choice.algorithm = "scatter to the indices";
  choice.kernel = std::make_unique<TopKGradKernel>(topk_shape(r.node, r.inputs));
  return choice;
}

// --- ArgMax, ArgMin --------------------------------------------------------------------------
template <class T>
class ArgKernel final : public Kernel {
 public:
  ArgKernel(AxisView v, bool max, bool last) : v_(v), max_(max), last_(last) {}
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    int64_t* y = args.out<int64_t>(0);
    for (int64_t o = 0; o < v_.outer; ++o) {
      for (int64_t in = 0; in < v_.inner; ++in) {
        const T* line = x + o * v_.size * v_.inner + in;
        int64_t best = 0;
        for (int64_t i = 1; i < v_.size; ++i) {
          const T a = line[i * v_.inner], b = line[best * v_.inner];
          const bool better = max_ ? a > b : a < b;
          if (better || (last_ && a == b)) best = i;
        }
        y[o * v_.inner + in] = best;
      }
    }
  }

 private:
  AxisView v_;
  bool max_, last_;
};

KernelFactory arg_factory(bool max) {
  return [max](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    const Shape& x = inputs[0].info.shape;
    const AxisView v = axis_view(x, normalize_axis(node, node.attr_int("axis", 0), static_cast<int64_t>(x.size())));
    const bool last = node.attr_int("select_last_index", 0) != 0;
    KernelChoice choice;
    choice.algorithm = "line scan";
    choice.kernel = with_dtype(inputs[0].info.dtype, [&](auto t) -> std::unique_ptr<Kernel> {
      return std::make_unique<ArgKernel<decltype(t)>>(v, max, last);
    });
    return choice;
  };
}

}  // namespace

void register_cpu_indexing_kernels(KernelRegistry& r) {
  r.add("GatherElements", plan_gather_elements).with_dtypes(movable_types()).with_gradient(plan_gather_elements_grad);
  r.add("ScatterND", plan_scatter_nd);
  r.add("Tile", plan_tile).with_dtypes(movable_types()).with_gradient(plan_tile_grad);
  r.add("TopK", plan_topk).with_gradient(plan_topk_grad);
  r.add("ArgMax", arg_factory(true));
  r.add("ArgMin", arg_factory(false));
}

}  // namespace dnnx
