// The channels-last depthwise conv's column walk (Note [depthwise column walk] in
// conv_nhwc_depthwise_walk_cpu.cc): the interior pixels of an output row, one 16-channel vector at
// a time, where the window is 3x3, 5x5 or 7x7 at stride 1 or 2 (7x7: stride 1), dilation 1; and
// whole rows, borders included (Note [depthwise row walk]).
#pragma once
#include <cstdint>

#include "backends/cpu/conv/conv_nhwc_tiles_cpu.h"

namespace dnnx {

// The pixels the walk takes at least: fewer (a 7x7 plane's 3 or 5 inner pixels) stay on the
// strips of all of a channel block's vectors (nhwc_depthwise_strip), which load each tap's
// filter vectors once for every vector of the block.
constexpr int64_t kDepthwiseWalkMinPixels = 8;

// nhwc_depthwise_strip's contract (conv_nhwc_tiles_cpu.h) for a strip whose every pixel's window
// lies inside X along the row (kw in [0, S)); false, having done nothing, where the walk does not
// take the shape or this CPU has no AVX-512 (the caller's strips run it then).
bool nhwc_depthwise_walk(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y, int64_t m,
                         const NhwcEpilogue& e);

// A whole output row (Note [depthwise row walk]): its ow pixels, X's rows `width` columns wide
// read from column -pad (s.iw0, kw_lo and kw_hi are not read), y at the row's first pixel; false,
// having done nothing, where the row is not one of the walked geometries.
bool nhwc_depthwise_row_walk(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y, int64_t ow,
                             int64_t width, int64_t pad, const NhwcEpilogue& e);

}  // namespace dnnx
