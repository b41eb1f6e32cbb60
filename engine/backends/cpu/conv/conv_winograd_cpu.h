// The 3x3 unit-stride conv on the CPU as Winograd F(2x2, 3x3) (conv_winograd_cpu.cc, Note
// [winograd conv]): ResNet's 3x3 layers. conv_cpu.cc picks it ("winograd F(2x2,3x3)") where
// why_not_winograd_conv says nothing.
#pragma once
#include <memory>
#include <string>

#include "backends/cpu/conv/conv_activation_cpu.h"
#include "backends/cpu/conv/im2col_cpu.h"
#include "runtime/backend.h"

namespace dnnx {

// Why the Winograd conv does not apply to `s` on this CPU, or "" when it does.
std::string why_not_winograd_conv(const ConvShape& s);

// The workspace of the kernel running `workers` images at once.
size_t winograd_conv_workspace_bytes(const ConvShape& s, int workers);

// x [N, C, H, W], w [M, C, 3, 3], b [M] (has_bias), z [N, M, OH, OW] (input 3, when residual),
// y [N, M, OH, OW] = relu?((conv + b) + z); the images split across `workers`.
// Then `act` (Conv+Clip, Conv+HardSwish, Conv+Swish) over each filter's output plane.
std::unique_ptr<Kernel> make_winograd_conv(const ConvShape& s, bool has_bias, bool relu, bool residual, int workers,
                                           const ConvActivation& act = {});

}  // namespace dnnx
