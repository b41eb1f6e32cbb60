// Inputs that dnnx must know when it plans: shapes, pads, axes, starts/ends, split sizes (each
// OpDef lists them in value_inputs). The planner fixes every shape before anything runs, so such
// an input is a constant, a value folded at plan time, or a value input whose value is part of
// the plan key (Note [value inputs] in runtime/plan_folding.h).
#pragma once
#include <optional>

#include "ops/op.h"

namespace dnnx {

// Whether optional input i is given (present and not "").
bool input_present(const std::vector<ValueInfo>& inputs, size_t i);

// Input i's integer data; UnsupportedModelError naming the node when it is not a constant.
std::vector<int64_t> constant_ints(const Node& node, const std::vector<ValueInfo>& inputs, size_t i,
                                   const char* what);

// As constant_ints, or nullopt when the optional input is omitted.
std::optional<std::vector<int64_t>> optional_constant_ints(const Node& node,
                                                           const std::vector<ValueInfo>& inputs,
                                                           size_t i, const char* what);

// Refuses an input that is not a scalar (or a one-element tensor) of the given dtype.
void require_scalar(const Node& node, const std::vector<ValueInfo>& inputs, size_t i, DType dtype,
                    const char* what);

}  // namespace dnnx
