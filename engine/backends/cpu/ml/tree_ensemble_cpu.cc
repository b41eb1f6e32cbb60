// TreeEnsemble on the CPU (ops/ml/tree_ensemble.cc has its semantics): every row walks every tree,
// the leaves' weights aggregated per target in X's type T, then the row's post-transform.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/errors.h"
#include "ops/ml/tree_ensemble.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

// onnxruntime's erfinv (ml_common.h): Winitzki's approximation, in float32.
float approx_erfinv(float x) {
  const float sign = x < 0 ? -1.0f : 1.0f;
  x = (1 - x) * (1 + x);
  const float log = std::log(x);
  const float v = 2 / (3.14159f * 0.147f) + 0.5f * log;
  const float v2 = 1 / 0.147f * log;
  const float v3 = -v + std::sqrt(v * v - v2);
  return sign * std::sqrt(v3);
}

float probit(float y) { return 1.41421356f * approx_erfinv(2 * y - 1); }

float logistic(float y) {
  const float v = 1 / (1 + std::exp(-std::abs(y)));
  return y < 0 ? 1 - v : v;
}

template <class T>
void softmax(T* y, int64_t n, bool zeros_stay) {
  T top = -std::numeric_limits<T>::max();
  for (int64_t i = 0; i < n; ++i) top = std::max(top, y[i]);
  T sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (zeros_stay && !(y[i] > T(1e-7) || y[i] < T(-1e-7))) {
      y[i] *= std::exp(-top);
      continue;
    }
    y[i] = std::exp(y[i] - top);
    sum += y[i];
  }
  for (int64_t i = 0; i < n; ++i) y[i] /= sum;
}

template <class T>
class TreeEnsembleKernel final : public Kernel {
 public:
  TreeEnsembleKernel(std::string where, TreeForest forest, int64_t rows, int64_t features)
      : where_(std::move(where)), f_(std::move(forest)), rows_(rows), features_(features) {}

  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    const int64_t targets = f_.n_targets;
    std::vector<bool> reached(static_cast<size_t>(targets));
    for (int64_t r = 0; r < rows_; ++r) {
      const T* row = x + r * features_;
      T* out = y + r * targets;
      std::fill(out, out + targets, T(0));
      std::fill(reached.begin(), reached.end(), false);
      for (size_t tree = 0; tree < f_.roots.size(); ++tree) {
        const int64_t leaf = f_.root_is_leaf[tree] ? f_.roots[tree] : walk(row, f_.roots[tree]);
        const size_t target = static_cast<size_t>(f_.leaf_targets[static_cast<size_t>(leaf)]);
        const T w = static_cast<T>(f_.leaf_weights[static_cast<size_t>(leaf)]);
        T& acc = out[target];
        switch (f_.aggregate) {
          case TreeAggregate::Min: acc = !reached[target] || w < acc ? w : acc; break;
          case TreeAggregate::Max: acc = !reached[target] || w > acc ? w : acc; break;
          default: acc += w;
        }
        reached[target] = true;
      }
      if (f_.aggregate == TreeAggregate::Average) {
        for (int64_t t = 0; t < targets; ++t) out[t] /= static_cast<T>(f_.roots.size());
      }
      post_transform(out, targets);
    }
  }

 private:
  // The leaf `row` reaches from node `at`.
  int64_t walk(const T* row, int64_t at) const {
    for (size_t steps = 0; steps <= f_.nodes.size(); ++steps) {
      const TreeNode& n = f_.nodes[static_cast<size_t>(at)];
      const bool go_true = decide(n, static_cast<double>(row[n.feature]));
      const bool leaf = go_true ? n.true_leaf : n.false_leaf;
      at = go_true ? n.next_true : n.next_false;
      if (leaf) return at;
    }
    throw InvalidModelError(where_ + ": a tree walk passed more nodes than the forest has (the trees have a cycle)");
  }

  bool decide(const TreeNode& n, double v) const {
    if (n.missing_true && std::isnan(v)) return true;
    switch (n.mode) {
      case TreeBranch::Leq: return v <= n.split;
      case TreeBranch::Lt: return v < n.split;
      case TreeBranch::Gte: return v >= n.split;
      case TreeBranch::Gt: return v > n.split;
      case TreeBranch::Eq: return v == n.split;
      case TreeBranch::Neq: return v != n.split;
      case TreeBranch::Member:
        if (n.truncated_members) {  // Note [member sets]
          if (!(v > -2147483649.0 && v < 2147483648.0)) return false;
          v = std::trunc(v);
        }
        return std::find(f_.members.begin() + static_cast<std::ptrdiff_t>(n.members_begin),
                         f_.members.begin() + static_cast<std::ptrdiff_t>(n.members_end), v) !=
               f_.members.begin() + static_cast<std::ptrdiff_t>(n.members_end);
    }
    return false;
  }

  void post_transform(T* out, int64_t targets) const {
    const TreePostTransform p = f_.post_transform;
    if (p == TreePostTransform::Probit) {
      for (int64_t t = 0; t < targets; ++t) out[t] = static_cast<T>(probit(static_cast<float>(out[t])));
      return;
    }
    if (targets < 2) return;  // onnxruntime applies only PROBIT to one target
    if (p == TreePostTransform::Logistic) {
      for (int64_t t = 0; t < targets; ++t) out[t] = static_cast<T>(logistic(static_cast<float>(out[t])));
    } else if (p == TreePostTransform::Softmax || p == TreePostTransform::SoftmaxZero) {
      softmax(out, targets, p == TreePostTransform::SoftmaxZero);
    }
  }

  std::string where_;
  TreeForest f_;
  int64_t rows_, features_;
};

KernelChoice plan_tree_ensemble(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  const Shape& x = inputs[0].info.shape;
  const int64_t features = x.back();
  const int64_t rows = outputs[0].shape[0];
  KernelChoice choice;
  choice.algorithm = "tree walk per row";
  if (inputs[0].info.dtype == DType::Float64) {
    choice.kernel = std::make_unique<TreeEnsembleKernel<double>>(node.where(), tree_forest(node), rows, features);
  } else {
    choice.kernel = std::make_unique<TreeEnsembleKernel<float>>(node.where(), tree_forest(node), rows, features);
  }
  return choice;
}

}  // namespace

void register_cpu_tree_ensemble_kernels(KernelRegistry& r) {
  r.add("ai.onnx.ml::TreeEnsemble", plan_tree_ensemble).with_dtypes({DType::Float32, DType::Float64});
}

}  // namespace dnnx
