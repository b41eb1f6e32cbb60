#include "train/loss.h"

#include <algorithm>
#include <cmath>

namespace dnnx {

LossKind loss_from_name(const std::string& name) {
  // softmax_cross_entropy is cross_entropy by onnx's name; nll reads log-probabilities (TrainerOptions)
  if (name == "cross_entropy" || name == "softmax_cross_entropy" || name == "nll") return LossKind::CrossEntropy;
  if (name == "mse") return LossKind::MeanSquaredError;
  throw InputError("loss: expected 'cross_entropy', 'softmax_cross_entropy', 'nll' or 'mse', got '" + name + "'");
}

namespace {

int64_t argmax(const float* row, int64_t c) { return std::max_element(row, row + c) - row; }

}  // namespace

LossValue cross_entropy(ScoreKind kind, const float* scores, int64_t n, int64_t c, const int64_t* labels,
                        float* d_scores) {
  LossValue out;
  const double inv_n = n > 0 ? 1.0 / static_cast<double>(n) : 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = labels[i];
    if (label < 0 || label >= c) {
      throw InputError("y: label " + std::to_string(label) + " at row " + std::to_string(i) +
                       " is outside [0, " + std::to_string(c) + ") (the model's output has " +
                       std::to_string(c) + " classes)");
    }
    const float* row = scores + i * c;
    out.correct += argmax(row, c) == label ? 1 : 0;
    float* d_row = d_scores ? d_scores + i * c : nullptr;
    if (kind == ScoreKind::LogProbs) {
      out.loss -= row[label];
      if (d_row) {
        std::fill(d_row, d_row + c, 0.0f);
        d_row[label] = static_cast<float>(-inv_n);
      }
      continue;
    }
    // log softmax(x)[j] = (x[j] - max) - log(sum exp(x - max)): no exp overflows. Summed in double.
    const float max = row[argmax(row, c)];
    double sum = 0;
    for (int64_t j = 0; j < c; ++j) sum += std::exp(static_cast<double>(row[j] - max));
    const double log_sum = std::log(sum);
    out.loss += log_sum - static_cast<double>(row[label] - max);
    if (d_row) {
      // dLoss/dx[j] = (softmax(x)[j] - [j == label]) / n
      for (int64_t j = 0; j < c; ++j) {
        const double p = std::exp(static_cast<double>(row[j] - max) - log_sum);
        d_row[j] = static_cast<float>((p - (j == label ? 1.0 : 0.0)) * inv_n);
      }
    }
  }
  out.loss *= inv_n;
  return out;
}

LossValue mean_squared_error(const float* y, const float* target, int64_t n, int64_t c, float* d_y) {
  LossValue out;
  const int64_t count = n * c;
  const double inv = count > 0 ? 1.0 / static_cast<double>(count) : 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double diff = static_cast<double>(y[i]) - target[i];
    out.loss += diff * diff;
    if (d_y) d_y[i] = static_cast<float>(2.0 * diff * inv);
  }
  out.loss *= inv;
  for (int64_t i = 0; c > 0 && i < n; ++i) {
    out.correct += argmax(y + i * c, c) == argmax(target + i * c, c) ? 1 : 0;
  }
  return out;
}

}  // namespace dnnx
