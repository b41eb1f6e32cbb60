// The 2-D window fields shared by the hand-written conv kernels' shape structs (DirectConv2d,
// DirectConvPool): each has int kh, kw, sh, sw, dh, dw, ph, pw, filled here from
// a 2-D ConvGeometry (pads: the ones before; after is implied by the output dims). The caller has
// checked that the values fit an int.
#pragma once
#include "ops/conv/conv_geometry.h"

namespace dnnx::cuda {

template <class Shape2d>
void set_window_2d(Shape2d& s, const ConvGeometry& g) {
  s.kh = static_cast<int>(g.kernel[0]);
  s.kw = static_cast<int>(g.kernel[1]);
  s.sh = static_cast<int>(g.strides[0]);
  s.sw = static_cast<int>(g.strides[1]);
  s.dh = static_cast<int>(g.dilations[0]);
  s.dw = static_cast<int>(g.dilations[1]);
  s.ph = static_cast<int>(g.pads_begin[0]);
  s.pw = static_cast<int>(g.pads_begin[1]);
}

}  // namespace dnnx::cuda
