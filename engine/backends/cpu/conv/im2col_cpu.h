// im2col and its adjoint col2im on 3-D windows (1-D and 2-D expanded: ConvGeometry::expanded_to),
// shared by the Conv kernel (conv_cpu.cc) and its gradient (conv_grad_cpu.cc).
#pragma once
#include <cstdint>

#include "ops/conv/conv_geometry.h"

namespace dnnx {

constexpr size_t kConvKernelRank = 3;  // D, H, W

// The sizes of one conv, fixed at plan time.
struct ConvShape {
  int64_t batch = 0;
  int64_t channels = 0;  // C
  int64_t filters = 0;   // M
  ConvGeometry g;        // expanded to 3 spatial dims
  int64_t group_channels() const { return channels / g.group; }
  int64_t group_filters() const { return filters / g.group; }
  int64_t col_rows() const { return group_channels() * g.kernel_size(); }
};

// Unrolls one group of one image: x is [Cg, D, H, W]; col is [Cg*KD*KH*KW, OD*OH*OW], row
// ((c*KD + kd)*KH + kh)*KW + kw for tap (kd, kh, kw) of channel c, matching W_g's layout;
// taps that fall in the padding read 0.
void im2col(const ConvShape& s, const float* x, float* col);
// Rows [row_begin, row_end) of that col (row r at col + r * OD*OH*OW): each row is one tap's
// copy, the same values however the rows are split (Note [im2col across the pool] in conv_cpu.cc).
void im2col_rows(const ConvShape& s, const float* x, float* col, int64_t row_begin, int64_t row_end);

// im2col of a 1x1, unpadded, strided conv: a strided gather, col [Cg, OD*OH*OW] with
// col[c, (od, oh, ow)] = x[c, od*SD, oh*SH, ow*SW]. No tap can fall in the padding, so there is
// nothing to test per row (what the general im2col does).
void gather_strided(const ConvShape& s, const float* x, float* col);

// The adjoint of im2col: x [Cg, D, H, W] = the sum, over every col entry, of the entry added at
// the input position it was read from (padding taps dropped). x is overwritten.
void col2im(const ConvShape& s, const float* col, float* x);

}  // namespace dnnx
