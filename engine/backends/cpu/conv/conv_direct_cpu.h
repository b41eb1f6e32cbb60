// Direct conv on the CPU (conv_direct_cpu.cc): Y_g = W_g * X_g computed from X_g itself, no im2col
// and no GEMM library, for unstrided, undilated convs whose image fits in the cache (LeNet's
// layers); a padded one reads a zero-padded copy of X_g (Note [padded direct conv]). conv_cpu.cc
// picks it ("direct") where why_not_direct_conv says nothing.
#pragma once
#include <string>

#include "backends/cpu/conv/im2col_cpu.h"
#include "backends/cpu/conv/tap_gemm_cpu.h"

namespace dnnx {

// Why the direct conv does not apply to `s` on this CPU, or "" when it does.
std::string why_not_direct_conv(const ConvShape& s);

// One group of one image as a TapGemm (tap_gemm_cpu.h): A = W_g [Mg, Cg*K], B = X_g
// [Cg, D, H, W] (padded: its copy, direct_padded_floats) with taps[(c, kd, kh, kw)] = the input
// offset of that tap, and C = Y_g [Mg, OSP] in tiles of each output row's vectors (a unit stride:
// output (od, oh, ow)'s window starts at input (od, oh, ow) of the padded image). Its panels are
// groups of filters.
TapGemm direct_conv_gemm(const ConvShape& s);

// Floats of one image-group's zero-padded copy [Cg, D', H', W'] (0 for an unpadded conv: X_g is
// read in place).
int64_t direct_padded_floats(const ConvShape& s);

// x_g [Cg, D, H, W] into dst [Cg, D', H', W'] with the conv's pads as zeros.
void pad_direct_input(const ConvShape& s, const float* x_g, float* dst);

}  // namespace dnnx
