// "Conv+MaxPool" and "Conv+Relu+MaxPool", made by the fuse_conv_pool pass (runtime/passes): a Conv
// (or Conv+Relu) whose output feeds one MaxPool alone, as one node. It keeps the conv's inputs
// and attributes, takes the pool's output, and carries the pool's attributes under the prefix
// "pool_" (both ops have kernel_shape, pads, strides and dilations). Meaning and shapes are
// those of the two nodes in sequence: split_conv_pool gives them back.
#pragma once
#include <string>

#include "ir/graph.h"

namespace dnnx {

constexpr const char* kConvPoolSuffix = "+MaxPool";
constexpr const char* kPoolAttrPrefix = "pool_";
// The name the split conv's output takes (the pool's input): never a tensor of the model.
constexpr const char* kConvPoolInner = "conv_pool.inner";

struct ConvPoolParts {
  Node conv;  // "Conv" or "Conv+Relu": the fused node's inputs, output kConvPoolInner
  Node pool;  // "MaxPool": input kConvPoolInner, the fused node's output
};

bool is_conv_pool(const std::string& op_type);
ConvPoolParts split_conv_pool(const Node& fused);
// The fused node for `conv` ("Conv" or "Conv+Relu") followed by `pool` (a MaxPool reading it).
Node join_conv_pool(const Node& conv, const Node& pool);

}  // namespace dnnx
