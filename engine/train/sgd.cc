#include "train/sgd.h"

#include <cmath>
#include <string>

#include "ir/errors.h"

namespace dnnx {

void check_sgd_options(const SgdOptions& o) {
  if (!(o.momentum >= 0.0f && o.momentum < 1.0f)) {
    throw InputError("momentum: expected a value in [0, 1), got " + std::to_string(o.momentum));
  }
  if (!(o.weight_decay >= 0.0f) || !std::isfinite(o.weight_decay)) {
    throw InputError("weight_decay: expected a finite value >= 0, got " + std::to_string(o.weight_decay));
  }
  if (o.nesterov && o.momentum == 0.0f) throw InputError("nesterov: Nesterov momentum needs momentum > 0");
}

void sgd_update(const SgdOptions& o, float lr, float* w, const float* grad, float* velocity, int64_t n) {
  const float mu = o.momentum, wd = o.weight_decay;
  if (mu == 0.0f) {
    for (int64_t i = 0; i < n; ++i) w[i] -= lr * (grad[i] + wd * w[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const float g = grad[i] + wd * w[i];
    const float v = mu * velocity[i] + g;
    velocity[i] = v;
    w[i] -= lr * (o.nesterov ? g + mu * v : v);
  }
}

}  // namespace dnnx
