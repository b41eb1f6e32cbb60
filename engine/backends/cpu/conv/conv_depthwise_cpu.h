// The depthwise conv on the CPU (conv_depthwise_cpu.cc, Note [direct depthwise conv]): one group
// per input channel (MobileNet's, EfficientNet's and ConvNeXt's 3x3, 5x5 and 7x7 layers).
// conv_cpu.cc picks it ("direct depthwise 3x3") where why_not_depthwise_conv says nothing.
#pragma once
#include <memory>
#include <string>

#include "backends/cpu/conv/conv_activation_cpu.h"
#include "backends/cpu/conv/im2col_cpu.h"
#include "runtime/backend.h"

namespace dnnx {

// Why the direct depthwise conv does not apply to `s`, or "" when it does.
std::string why_not_depthwise_conv(const ConvShape& s);

// The workspace of the kernel on `workers` threads: each its zero-padded phase planes of one
// input plane (none for an unpadded unit-stride conv) and one flat output plane.
size_t depthwise_conv_workspace_bytes(const ConvShape& s, int workers);

// The threads the kernel splits its N*C input planes across (plan_workers on this shape).
int depthwise_conv_workers(const ConvShape& s);

// x [N, C, H, W], w [M, 1, KH, KW] (M = C * multiplier), b [M] (has_bias), z [N, M, OH, OW]
// (input 3, when residual), y [N, M, OH, OW] = relu?((conv + b) + z); the input planes split
// across `workers`; then `act` (Conv+Clip, Conv+HardSwish, Conv+Swish) over each output plane.
std::unique_ptr<Kernel> make_depthwise_conv(const ConvShape& s, bool has_bias, bool relu, bool residual, int workers,
                                            const ConvActivation& act = {});

}  // namespace dnnx
