// BatchNormalization's shared meaning (batchnorm.cc says the semantics).
#pragma once
#include "ops/op.h"

namespace dnnx {

// Whether the node normalizes with its batch's statistics (training_mode=1) rather than its inputs'.
bool batchnorm_training(const Node& node);

}  // namespace dnnx
