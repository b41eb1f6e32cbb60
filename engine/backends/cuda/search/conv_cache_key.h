// The plan-cache key of one convolution in one direction (plan_cache.h): read back from the
// descriptors the search will use, so that nothing the choice depends on can be left out of it.
#pragma once
#include <string>

#include "backends/cuda/search/conv_algo.h"

namespace dnnx::cuda {

// "conv fwd | NVIDIA H200 sm_90 cuDNN 91900 | x float 64x1x28x28/784x784x28x1 | w float NCHW
//  20x1x5x5 | y ... | pad 0,0 stride 1,1 dilation 1,1 groups 1 cross-correlation compute float
//  | math FMA | search exhaustive deterministic 0 | workspace limit 268435456"
// ("conv bwd data | ...", "conv bwd filter | ..." backward.)
// Call before the search changes the descriptor's math type: the key holds the one asked for.
std::string conv_cache_key(const CudaContext& ctx, const ConvDescriptors& d, size_t workspace_limit,
                           ConvDirection dir = ConvDirection::Forward);

// "fwd | x float 64x1x28x28/784x784x28x1 | w ... | y ... | pad ... | math FMA": the direction and
// the descriptors as they are set now (the math type included), all that cuDNN's queries read
// besides the device (Note [conv query memo], conv_direction.cc).
std::string conv_descriptor_text(const ConvDescriptors& d, ConvDirection dir);

}  // namespace dnnx::cuda
