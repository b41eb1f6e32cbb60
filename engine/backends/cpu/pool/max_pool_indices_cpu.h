// MaxPool with its Indices output on the CPU (max_pool_indices_cpu.cc), planned by pool_cpu.cc's
// MaxPool factory for a node that asks for Indices.
#pragma once
#include "runtime/backend.h"

namespace dnnx {

KernelChoice plan_max_pool_with_indices(const Node& node, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
