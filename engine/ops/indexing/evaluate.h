// The shared piece of the value-shaped ops (Note [staged plans] in runtime/stages.h): their
// output types when the planner can compute them now.
#pragma once
#include <functional>
#include <vector>

#include "ops/op.h"

namespace dnnx {

using HostEvaluate = std::function<std::vector<ConstTensorPtr>(const Node&, const std::vector<ConstTensorPtr>&)>;

// The types of `eval`'s outputs when every present input is a constant of the plan (the planner
// then folds the node); an InvalidModelError naming the node otherwise (the engine runs it).
std::vector<TensorInfo> infer_by_evaluating(const Node& node, const std::vector<ValueInfo>& in, const HostEvaluate& eval);

}  // namespace dnnx
