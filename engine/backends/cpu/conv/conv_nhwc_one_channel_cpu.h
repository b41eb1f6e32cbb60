// The channels-last conv of one input channel (Note [one-channel nhwc conv] in
// conv_nhwc_one_channel_cpu.cc): a stem on a grey image or a spectrogram.
#pragma once
#include <memory>
#include <string>

#include "backends/cpu/conv/conv_activation_cpu.h"
#include "backends/cpu/conv/conv_nhwc_cpu.h"
#include "backends/cpu/conv/conv_nhwc_tiles_cpu.h"

namespace dnnx {

// Whether the one-channel kernel takes g ("" when it does): C = 1, one group, a constant filter.
std::string why_not_one_channel_nhwc(const NhwcConv& g, bool constant_filter);

struct OneChannelNhwc {
  std::unique_ptr<Kernel> kernel;
  int workers = 1;
  size_t workspace_bytes = 0;
};

// inputs X [N, H, W, 1], (the filter: `filter`, [K, R, S, 1], packed here), with has_bias the bias
// [K] at input 2, with residual Conv+Add+Relu's z [N, OH, OW, K] at input 3; y = clamp(sum + bias
// + z) as `clamp` says, then `act` (HardSwish, Swish) over the rows.
OneChannelNhwc make_one_channel_nhwc(const NhwcConv& g, const float* filter, bool has_bias, bool residual,
                                     const NhwcEpilogue& clamp, const ConvActivation& act);

}  // namespace dnnx
