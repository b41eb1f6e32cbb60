// MaxPool's commonest window on float32 NCHW: 2x2 at stride 2, no padding or dilation (LeNet's,
// VGG's, the small CIFAR models'), one plane at a time in AVX-512 (max_pool_2x2_cpu.cc, Note
// [max pool 2x2]).
#pragma once
#include <cstdint>

#include "ops/conv/conv_geometry.h"

namespace dnnx {

// Whether the 2x2 path takes a pool of this geometry (expanded to D, H, W) here: a 2-D pool, a
// 2x2 window at stride 2 with no padding or dilation, the outputs inside the input (floor mode,
// or ceil mode where it rounds nothing up), on a CPU with AVX-512.
bool max_pool_2x2_applies(const ConvGeometry& g3);

// y [oh, ow] = the max of each 2x2 block of x [h, w] (h >= 2 oh, w >= 2 ow), as the general
// kernel computes it: std::max(row 0, row 1) per column, then std::max(column 2j, column 2j+1);
// so the same bits, NaNs included.
void max_pool_2x2_plane(const float* x, int64_t w, int64_t oh, int64_t ow, float* y);

}  // namespace dnnx
