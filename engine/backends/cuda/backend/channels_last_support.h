// Which "<op>@NHWC" nodes the CUDA backend can run (Note [channels last]): its channels-last
// kernels are cuDNN calls on NHWC descriptors (and cuBLASLt for 1x1 convs), which pad
// symmetrically and have no ceil_mode, dilated pooling or pool indices. The pass asks before it
// converts a node, so a window outside these stays NCHW (between Transposes) instead of failing.
#pragma once
#include <string>

#include "core/graph.h"

namespace dnnx::cuda {

// "" when the CUDA backend runs this channels-last node, else why not.
std::string channels_last_unsupported_reason(const Node& node);

}  // namespace dnnx::cuda
