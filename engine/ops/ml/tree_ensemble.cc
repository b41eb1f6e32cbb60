// TreeEnsemble (ai.onnx.ml 5), with onnxruntime's semantics: X [N, F] of float32 or float64 ->
// Y [N, n_targets] of X's type.
//   Each tree (tree_roots) is walked from its root: node i compares feature nodes_featureids[i]
//   with nodes_splits[i] by nodes_modes[i] (LEQ, LT, GTE, GT, EQ, NEQ; MEMBER: the feature is one
//   of the node's set, membership_values holding each MEMBER node's set in node order, sets
//   separated by NaN); a NaN feature takes the true branch where nodes_missing_value_tracks_true
//   says so, and otherwise goes where the comparison (false for NaN, but NEQ) sends it. A branch
//   leads to nodes_{true,false}nodeids[i]: a node, or where nodes_{true,false}leafs[i] a leaf
//   index, whose leaf_weights value adds to target leaf_targetids.
//   aggregate_function over the trees per target: SUM (1), AVERAGE (0: the sum over the tree
//   count), MIN (2), MAX (3) (a target no leaf reached is 0), summed in X's type in tree order.
//   post_transform per row: with n_targets >= 2 NONE (0), LOGISTIC (1), SOFTMAX (2), SOFTMAX_ZERO
//   (3: entries within 1e-7 of 0 stay 0), PROBIT (4) (Note [post_transform codes]); with one
//   target onnxruntime applies PROBIT only, and its PROBIT is sqrt(2) * erfinv(2y - 1) by
//   Winitzki's approximation (a = 0.147), in float32, as dnnx does.
// Note [post_transform codes]: onnx's spec numbers post_transform 1 SOFTMAX and 2 LOGISTIC;
// onnxruntime 1.32 reads the integer through its own enum, where 1 is LOGISTIC and 2 SOFTMAX.
// dnnx gives onnxruntime's results (tests/test_ml_ops.py holds both to it).
// Note [member sets]: onnxruntime matches a MEMBER node of fewer than 31 values, all within
// [0, 30], exactly (it unrolls the set into EQ nodes); any other set must hold only int32 values
// (it refuses others at load) and matches the feature truncated toward zero to an int32 (NaN and
// values beyond int32 match nothing): 0.5 is in {0, 40}, but not in {0, 3}. dnnx does the same.
// Note [one-leaf trees]: onnxruntime takes a root whose true and false branches are the same
// leaf as a one-leaf tree, and reads that leaf at the root's own index (not the branch's):
// dnnx follows it.
// The splits, weights and sets are tensors of X's type; nodes_hitrates is accepted and unused.
// A malformed forest (an index out of range, a cycle) is refused: indices at load, a walk
// longer than the node count at run time.
#include "ops/ml/tree_ensemble.h"

#include <algorithm>
#include <cmath>

#include "ops/ml/ml_attrs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<double> tensor_attr_doubles(const Node& node, const std::string& name, bool required) {
  const ConstTensor* t = attr_tensor(node, name);
  if (!t) {
    if (required) node_fail<InvalidModelError>(node, "attribute '" + name + "' (a tensor) is required");
    return {};
  }
  return tensor_doubles(node, *t, name);
}

void require_size(const Node& node, const char* name, size_t got, size_t want, const char* of) {
  if (got != want) {
    node_fail<InvalidModelError>(node, std::string("attribute '") + name + "' has " + std::to_string(got) +
                                           " values, expected " + std::to_string(want) + " (one per " + of + ")");
  }
}

void validate_tree_ensemble(const Node& node) {
  node.expect_only_attrs({"aggregate_function", "leaf_targetids", "leaf_weights", "membership_values", "n_targets",
                          "nodes_falseleafs", "nodes_falsenodeids", "nodes_featureids", "nodes_hitrates",
                          "nodes_missing_value_tracks_true", "nodes_modes", "nodes_splits", "nodes_trueleafs",
                          "nodes_truenodeids", "post_transform", "tree_roots"});
  tree_forest(node);
}

std::vector<TensorInfo> infer_tree_ensemble(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  if (x.dtype != DType::Float32 && x.dtype != DType::Float64) {
    node_fail<UnsupportedModelError>(node, std::string("X is ") + dtype_name(x.dtype) + ", expected float32 or float64");
  }
  if (x.shape.size() != 2) node_fail<InvalidModelError>(node, "X must be [N, F], got " + shape_str(x.shape));
  for (const char* name : {"nodes_splits", "leaf_weights", "membership_values"}) {
    const ConstTensor* t = attr_tensor(node, name);
    if (t && t->info.dtype != x.dtype) {
      node_fail<InvalidModelError>(node, std::string("attribute '") + name + "' is " + dtype_name(t->info.dtype) +
                                             ", expected X's type " + dtype_name(x.dtype));
    }
  }
  const TreeForest forest = tree_forest(node);
  const int64_t features = x.shape.back();
  const int64_t rows = x.shape[0];
  if (forest.max_feature >= features && rows > 0) {
    node_fail<InvalidModelError>(node, "a node reads feature " + std::to_string(forest.max_feature) + " but X has " +
                                           std::to_string(features) + " (X " + shape_str(x.shape) + ")");
  }
  return {TensorInfo{{rows, forest.n_targets}, x.dtype}};
}

}  // namespace

TreeForest tree_forest(const Node& node) {
  TreeForest f;
  f.n_targets = node.attr_int("n_targets", 0);
  if (f.n_targets <= 0) node_fail<InvalidModelError>(node, "attribute 'n_targets' must be positive, got " + std::to_string(f.n_targets));
  const int64_t aggregate = node.attr_int("aggregate_function", 1);
  if (aggregate < 0 || aggregate > 3) node_fail<InvalidModelError>(node, "aggregate_function must be 0 to 3, got " + std::to_string(aggregate));
  f.aggregate = static_cast<TreeAggregate>(aggregate);
  const int64_t post = node.attr_int("post_transform", 0);
  if (post < 0 || post > 4) node_fail<InvalidModelError>(node, "post_transform must be 0 to 4, got " + std::to_string(post));
  f.post_transform = static_cast<TreePostTransform>(post);

  const ConstTensor* modes_t = attr_tensor(node, "nodes_modes");
  if (!modes_t) node_fail<InvalidModelError>(node, "attribute 'nodes_modes' (a tensor) is required");
  const std::vector<int64_t> modes = tensor_ints(node, *modes_t, "nodes_modes");
  const size_t n = modes.size();
  const std::vector<double> splits = tensor_attr_doubles(node, "nodes_splits", true);
  const std::vector<int64_t> features = node.attr_ints("nodes_featureids", {});
  const std::vector<int64_t> true_ids = node.attr_ints("nodes_truenodeids", {});
  const std::vector<int64_t> false_ids = node.attr_ints("nodes_falsenodeids", {});
  const std::vector<int64_t> true_leafs = node.attr_ints("nodes_trueleafs", {});
  const std::vector<int64_t> false_leafs = node.attr_ints("nodes_falseleafs", {});
  const std::vector<int64_t> missing = node.attr_ints("nodes_missing_value_tracks_true", {});
  require_size(node, "nodes_splits", splits.size(), n, "node of nodes_modes");
  require_size(node, "nodes_featureids", features.size(), n, "node of nodes_modes");
  require_size(node, "nodes_truenodeids", true_ids.size(), n, "node of nodes_modes");
  require_size(node, "nodes_falsenodeids", false_ids.size(), n, "node of nodes_modes");
  require_size(node, "nodes_trueleafs", true_leafs.size(), n, "node of nodes_modes");
  require_size(node, "nodes_falseleafs", false_leafs.size(), n, "node of nodes_modes");
  if (!missing.empty()) require_size(node, "nodes_missing_value_tracks_true", missing.size(), n, "node of nodes_modes");
  const std::vector<double> hitrates = tensor_attr_doubles(node, "nodes_hitrates", false);
  if (!hitrates.empty()) require_size(node, "nodes_hitrates", hitrates.size(), n, "node of nodes_modes");

  f.leaf_targets = node.attr_ints("leaf_targetids", {});
  f.leaf_weights = tensor_attr_doubles(node, "leaf_weights", true);
  require_size(node, "leaf_weights", f.leaf_weights.size(), f.leaf_targets.size(), "leaf of leaf_targetids");
  for (int64_t t : f.leaf_targets) {
    if (t < 0 || t >= f.n_targets) {
      node_fail<InvalidModelError>(node, "leaf_targetids holds " + std::to_string(t) + ", outside [0, n_targets = " +
                                             std::to_string(f.n_targets) + ")");
    }
  }
  const int64_t leaves = static_cast<int64_t>(f.leaf_targets.size());
  const std::vector<double> members = tensor_attr_doubles(node, "membership_values", false);
  size_t next_member = 0;
  f.nodes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    TreeNode& t = f.nodes[i];
    const std::string where = "node " + std::to_string(i) + " of the forest";
    if (modes[i] < 0 || modes[i] > 6) node_fail<InvalidModelError>(node, where + ": mode " + std::to_string(modes[i]) + " is not 0 to 6");
    t.mode = static_cast<TreeBranch>(modes[i]);
    t.feature = features[i];
    if (t.feature < 0) node_fail<InvalidModelError>(node, where + ": feature id " + std::to_string(t.feature) + " is negative");
    f.max_feature = std::max(f.max_feature, t.feature);
    t.split = splits[i];
    t.missing_true = !missing.empty() && missing[i] != 0;
    t.true_leaf = true_leafs[i] != 0, t.false_leaf = false_leafs[i] != 0;
    t.next_true = true_ids[i], t.next_false = false_ids[i];
    for (auto [id, leaf, side] : {std::tuple{t.next_true, t.true_leaf, "true"}, std::tuple{t.next_false, t.false_leaf, "false"}}) {
      const int64_t bound = leaf ? leaves : static_cast<int64_t>(n);
      if (id < 0 || id >= bound) {
        node_fail<InvalidModelError>(node, where + ": its " + side + " branch " + std::to_string(id) + " is outside [0, " +
                                               std::to_string(bound) + ") (" + (leaf ? "leaves" : "nodes") + ")");
      }
    }
    if (t.mode == TreeBranch::Member) {  // this node's set: up to the next NaN
      t.members_begin = f.members.size();
      while (next_member < members.size() && !std::isnan(members[next_member])) f.members.push_back(members[next_member++]);
      ++next_member;
      t.members_end = f.members.size();
      if (t.members_begin == t.members_end) node_fail<InvalidModelError>(node, where + ": a BRANCH_MEMBER node with an empty set");
      const auto [lo, hi] = std::minmax_element(f.members.begin() + static_cast<std::ptrdiff_t>(t.members_begin), f.members.end());
      t.truncated_members = t.members_end - t.members_begin >= 31 || *lo < 0 || *hi > 30;  // Note [member sets]
      for (size_t m = t.members_begin; t.truncated_members && m < t.members_end; ++m) {
        const double v = f.members[m];
        if (v != std::trunc(v) || v < -2147483648.0 || v > 2147483647.0) {
          node_fail<InvalidModelError>(node, where + ": its set holds " + std::to_string(v) + "; a set of 31 or more values, "
                                                 "or one outside [0, 30], may hold only int32 values (as onnxruntime)");
        }
      }
    }
  }
  for (int64_t root : node.attr_ints("tree_roots", {})) {
    if (root < 0 || root >= static_cast<int64_t>(n)) {
      node_fail<InvalidModelError>(node, "tree_roots holds " + std::to_string(root) + ", outside [0, " + std::to_string(n) + ")");
    }
    const TreeNode& r = f.nodes[static_cast<size_t>(root)];
    const bool one_leaf = r.next_true == r.next_false && r.true_leaf && r.false_leaf;  // Note [member sets]: onnxruntime matches a MEMBER node of fewer than 31 values, all within
// [0, 30], exactly (it unrolls the set into EQ nodes); any other set must hold only int32 values
// (it refuses others at load) and matches the feature truncated toward zero to an int32 (NaN and
// values beyond int32 match nothing): 0.5 is in {0, 40}, but not in {0, 3}. dnnx does the same.
// Note [one-leaf trees]
    if (one_leaf && root >= leaves) {
      node_fail<InvalidModelError>(node, "tree root " + std::to_string(root) + " is a one-leaf tree but there are only " +
                                             std::to_string(leaves) + " leaves");
    }
    f.roots.push_back(root);
    f.root_is_leaf.push_back(one_leaf);
  }
  return f;
}

void register_tree_ensemble_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_tree_ensemble;
  def.infer = infer_tree_ensemble;
  def.min_opset = 5;
  r.add(op_key(kMlDomain, "TreeEnsemble"), std::move(def));
}

}  // namespace dnnx
