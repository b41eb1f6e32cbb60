// Stochastic gradient descent with momentum, Nesterov momentum and weight decay, in place on
// one parameter (PyTorch's torch.optim.SGD with dampening 0):
//   g = grad + weight_decay * w
//   v = momentum * v + g                      (v starts at 0; skipped when momentum is 0)
//   w -= lr * (nesterov ? g + momentum * v : v)
#pragma once
#include <cstdint>

#include "runtime/training.h"  // SgdOptions

namespace dnnx {

// InputError naming the option when momentum is outside [0, 1), weight_decay is negative or
// not finite, or nesterov is asked for without momentum.
void check_sgd_options(const SgdOptions& options);

// w, grad, velocity: [n]. velocity is unused when momentum is 0.
void sgd_update(const SgdOptions& options, float lr, float* w, const float* grad, float* velocity, int64_t n);

}  // namespace dnnx
