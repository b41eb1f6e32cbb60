// A conv in ONNX's layout on the packed channels-last tiles, through channels-last copies
// (conv_nchw_tiles_cpu.cc, Note [nchw convs on the tiles]): r3d_18's 3-D convs, and the 1-D and 2-D
// ones the channels_last pass leaves in ONNX's layout (speech_gru's). conv_cpu.cc picks
// it ("nchw->nhwc packed gemm ...") where why_not_nchw_tiles says nothing.
#pragma once
#include <string>

#include "backends/cpu/conv/conv_activation_cpu.h"
#include "backends/cpu/conv/im2col_cpu.h"
#include "runtime/backend.h"

namespace dnnx {

// Why `s` (a conv of `rank` spatial dims, before expanded_to) does not run this way on this CPU,
// or "" when it does. The filter must be a constant (it is permuted and packed at plan time).
std::string why_not_nchw_tiles(const ConvShape& s, size_t rank, bool constant_filter);

// x [N, C, D, H, W], w [M, C / group, KD, KH, KW] (the constant, `filter`), b [M] (has_bias),
// z [N, M, OD, OH, OW] (input 3, when residual): y = relu?((conv + b) + z), then `act`. The
// choice's algorithm, workspace and kernel.
KernelChoice make_nchw_tiles_conv(const ConvShape& s, const float* filter, bool has_bias, bool relu, bool residual,
                                  const ConvActivation& act);

}  // namespace dnnx
