// What the signal ops share: scalar inputs whose values fix their output shapes (a window's
// size, MelWeightMatrix's bins), and the output types they write.
#pragma once
#include "ops/op.h"

namespace dnnx {

// Input i's one integer value, known when planning (a value input: Note [value inputs]).
int64_t scalar_int_input(const Node& node, const std::vector<ValueInfo>& inputs, size_t i, const char* what);

// The output_datatype attribute as a DType: float32 only for now (UnsupportedModelError otherwise).
DType signal_output_dtype(const Node& node);

}  // namespace dnnx
