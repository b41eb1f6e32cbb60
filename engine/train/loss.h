// The losses fine-tuning minimises, on the host, each with its gradient:
//   cross entropy  integer labels [N] in [0, C) against scores [N, C]; read from the logits
//                  (a fused, stable log-softmax: the max is subtracted before exp) or, when the
//                  model ends in LogSoftmax, from its log-probabilities
//   mean squared   float targets of the output's shape; mean over every element
// Every loss is the batch mean, so the gradient is already divided by the batch size.
#pragma once
#include <cstdint>
#include <string>

#include "ir/errors.h"
#include "runtime/training.h"  // LossKind, ScoreKind

namespace dnnx {

// "cross_entropy" (also "softmax_cross_entropy", onnx's SoftmaxCrossEntropyLoss with reduction
// "mean", and "nll", its NegativeLogLikelihoodLoss: the scores read as log-probabilities) or
// "mse"; InputError naming `loss` otherwise.
LossKind loss_from_name(const std::string& name);

struct LossValue {
  double loss = 0;
  int64_t correct = 0;  // rows whose highest score is the label (cross entropy) or the target's argmax (mse)
};

// scores [n, c]; labels [n] (InputError naming `y` for a label outside [0, c)). d_scores
// [n, c], when not null, receives dLoss/dscores.
LossValue cross_entropy(ScoreKind kind, const float* scores, int64_t n, int64_t c, const int64_t* labels,
                        float* d_scores);

// y, target: [n, c] (c = the product of the trailing dims); d_y, when not null, gets dLoss/dy.
LossValue mean_squared_error(const float* y, const float* target, int64_t n, int64_t c, float* d_y);

}  // namespace dnnx
