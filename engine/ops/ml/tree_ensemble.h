// TreeEnsemble's forest, read once from a node's attributes (ops/ml/tree_ensemble.cc has the
// semantics) and walked by its kernel (backends/cpu/ml/tree_ensemble_cpu.cc).
#pragma once
#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace dnnx {

// nodes_modes' values (onnx's enum).
enum class TreeBranch : uint8_t { Leq = 0, Lt = 1, Gte = 2, Gt = 3, Eq = 4, Neq = 5, Member = 6 };
enum class TreeAggregate : int64_t { Average = 0, Sum = 1, Min = 2, Max = 3 };
// post_transform's values as onnxruntime reads them (Note [post_transform codes] in tree_ensemble.cc).
enum class TreePostTransform : int64_t { None = 0, Logistic = 1, Softmax = 2, SoftmaxZero = 3, Probit = 4 };

struct TreeNode {
  TreeBranch mode = TreeBranch::Leq;
  int64_t feature = 0;
  double split = 0;            // X's type's value, held exactly as a double
  bool missing_true = false;   // a NaN feature takes the true branch
  size_t members_begin = 0, members_end = 0;  // BRANCH_MEMBER's set: TreeForest::members[begin, end)
  bool truncated_members = false;  // the feature truncated to int32 is looked up (Note [member sets])
  int64_t next_true = 0, next_false = 0;      // a node index, or a leaf index where *_leaf
  bool true_leaf = false, false_leaf = false;
};

struct TreeForest {
  std::vector<TreeNode> nodes;
  std::vector<double> members;
  std::vector<int64_t> leaf_targets;
  std::vector<double> leaf_weights;
  // One per tree: the root node, or (root_is_leaf) the leaf of a one-leaf tree (Note in
  // tree_ensemble.cc).
  std::vector<int64_t> roots;
  std::vector<bool> root_is_leaf;
  int64_t n_targets = 0;
  int64_t max_feature = -1;  // the largest feature index a node reads
  TreeAggregate aggregate = TreeAggregate::Sum;
  TreePostTransform post_transform = TreePostTransform::None;
};

// The forest of `node`; InvalidModelError naming the attribute that does not fit.
TreeForest tree_forest(const Node& node);

}  // namespace dnnx
