// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: the ONNX meaning the op registry and
// every backend's kernels read. The scores X [N, C] or [N, C, d1..dk] are viewed as [N, C, D]
// (D = d1 * .. * dk, 1 without them) and the labels T [N] or [N, d1..dk] as [N, D]:
//   loss[n, d] = -w * X'[n, T[n, d], d],  w = weight[T[n, d]] (1 without a weight input)
// where X' is X itself (NLL: X holds log-probabilities) or log_softmax(X) along C (SCE, which
// can also output X' as log_prob). A label equal to ignore_index gives loss 0 and w 0; any other
// label outside [0, C) is refused when the kernel runs. Then, by `reduction`:
//   none  loss [N, d1..dk]     sum  sum(loss) []     mean  sum(loss) / sum(w) []
#pragma once
#include <cstdint>
#include <string>

#include "ops/op.h"

namespace dnnx {

enum class LossReduction { None, Sum, Mean };

struct ClassLossGeometry {
  int64_t n = 1, c = 1, d = 1;
  LossReduction reduction = LossReduction::Mean;
  bool has_ignore_index = false;
  int64_t ignore_index = 0;
  bool has_weight = false;
  DType label_type = DType::Int64;
  std::string where;  // the node, for the messages the kernels give at run time
};

// The OpDef has checked the shapes: inputs 0 (scores), 1 (labels) and 2 (weight, optional).
ClassLossGeometry class_loss_geometry(const Node& node, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
