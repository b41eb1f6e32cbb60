// com.microsoft's quantized unary ops run through a 256-entry table (onnxruntime's
// QlinearBuildLookupTable): QLinearSigmoid, QLinearLeakyRelu.
#pragma once
#include "ops/op.h"

namespace dnnx {

enum class LookupFunction { Sigmoid, LeakyRelu };

// The float function of a table op ("com.microsoft::QLinearSigmoid" -> Sigmoid).
LookupFunction lookup_function(const Node& node);

}  // namespace dnnx
