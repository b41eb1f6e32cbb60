// Conv -> BatchNormalization (inference) => one Conv with folded weights. Per output channel m:
//   s[m]  = scale[m] / sqrt(var[m] + epsilon)
//   W'[m] = W[m] * s[m]                          (W [M, C/group, k...])
//   B'[m] = (B[m] - mean[m]) * s[m] + bias[m]    (B = 0 when the Conv has none)
// Only when the Conv's output feeds the BN alone and W, B and the four statistics are
// constants. The Conv takes the BN's output name, so nothing downstream changes. The folded
// weights are new constants: W may be shared with another node.
#include <cmath>

#include "ops/normalization/batchnorm.h"
#include "runtime/passes/rewrite.h"

namespace dnnx {

namespace {

constexpr float kDefaultEpsilon = 1e-5f;
enum BnInput { kX = 0, kScale = 1, kBias = 2, kMean = 3, kVar = 4 };

bool is_float_vector(const ConstTensor* t, int64_t n) {
  return t && t->info.dtype == DType::Float32 && t->info.shape == Shape{n};
}

// Folds graph.nodes[bn] into graph.nodes[conv]; false (nothing changed) when some input is not
// a constant of the expected shape.
bool fold_one(Graph& graph, size_t conv_index, size_t bn_index) {
  Node& conv = graph.nodes[conv_index];
  const Node& bn = graph.nodes[bn_index];
  const ConstTensor* w = find_constant(graph, conv.inputs[1]);
  if (!w || w->info.dtype != DType::Float32 || w->info.shape.empty()) return false;
  const int64_t filters = w->info.shape[0];
  const ConstTensor* b = conv.has_input(2) ? find_constant(graph, conv.inputs[2]) : nullptr;
  if (conv.has_input(2) && !is_float_vector(b, filters)) return false;
  const ConstTensor* stats[5] = {};
  for (int i : {kScale, kBias, kMean, kVar}) {
    stats[i] = bn.has_input(i) ? find_constant(graph, bn.inputs[i]) : nullptr;
    if (!is_float_vector(stats[i], filters)) return false;
  }
  const float epsilon = bn.attr_float("epsilon", kDefaultEpsilon);
  const int64_t per_filter = numel(w->info.shape) / std::max<int64_t>(filters, 1);
  std::vector<float> new_w(w->as<float>(), w->as<float>() + numel(w->info.shape));
  std::vector<float> new_b(static_cast<size_t>(filters));
  for (int64_t m = 0; m < filters; ++m) {
    // In double: the folded weights then differ from the two-step result by fp32 rounding only.
    const double s = static_cast<double>(stats[kScale]->as<float>()[m]) /
                     std::sqrt(static_cast<double>(stats[kVar]->as<float>()[m]) + epsilon);
    for (int64_t j = 0; j < per_filter; ++j) new_w[m * per_filter + j] = static_cast<float>(new_w[m * per_filter + j] * s);
    const double bias_m = b ? b->as<float>()[m] : 0.0;
    new_b[m] = static_cast<float>((bias_m - stats[kMean]->as<float>()[m]) * s + stats[kBias]->as<float>()[m]);
  }
  const Shape w_shape = w->info.shape;
  const std::string bn_output = bn.outputs[0];
  const std::string base = bn.name.empty() ? conv.name : bn.name;
  const std::string w_name = add_constant(graph, base + ".folded_W", w_shape, std::move(new_w));
  const std::string b_name = add_constant(graph, base + ".folded_B", {filters}, std::move(new_b));
  Node& folded = graph.nodes[conv_index];
  folded.inputs.resize(3);
  folded.inputs[1] = w_name;
  folded.inputs[2] = b_name;
  folded.outputs[0] = bn_output;
  return true;
}

}  // namespace

int fold_batchnorm(Graph& graph, const PassOptions&) {
  std::vector<bool> dead(graph.nodes.size(), false);
  int folded = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& conv = graph.nodes[i];
    if (conv.op_type != "Conv" || conv.outputs.size() != 1 || !conv.has_output(0)) continue;
    const int c = sole_consumer(graph, conv.outputs[0]);
    if (c < 0 || graph.nodes[c].op_type != "BatchNormalization" || graph.nodes[c].inputs[kX] != conv.outputs[0] ||
        batchnorm_training(graph.nodes[c])) {  // batch statistics: nothing to fold
      continue;
    }
    if (fold_one(graph, i, static_cast<size_t>(c))) {
      dead[c] = true;
      ++folded;
    }
  }
  erase_nodes(graph, dead);
  return folded;
}

}  // namespace dnnx
