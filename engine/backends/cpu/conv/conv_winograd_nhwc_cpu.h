// The channels-last Winograd conv (Note [channels-last winograd] in conv_winograd_nhwc_cpu.cc),
// chosen by conv_nhwc_cpu.cc for 3x3 unit-stride convs of one group.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "backends/cpu/conv/conv_activation_cpu.h"
#include "backends/cpu/conv/conv_nhwc_cpu.h"
#include "backends/cpu/conv/conv_nhwc_tiles_cpu.h"
#include "runtime/backend.h"

namespace dnnx {

// Why the channels-last Winograd conv does not take the conv ("" when it does).
std::string why_not_winograd_nhwc(const NhwcConv& g, bool constant_filter);

struct WinogradNhwc {
  std::unique_ptr<Kernel> kernel;
  int workers = 1;
  size_t workspace_bytes = 0;
};

// w: the constant filter [K, 3, 3, C]. The kernel reads X (input 0), the bias (input 2, with
// has_bias) and the residual (input 3, with residual); `clamp`: Relu's or Clip's bounds.
WinogradNhwc make_winograd_nhwc(const NhwcConv& g, const float* w, bool has_bias, bool residual,
                                const NhwcEpilogue& clamp, const ConvActivation& act);

}  // namespace dnnx
