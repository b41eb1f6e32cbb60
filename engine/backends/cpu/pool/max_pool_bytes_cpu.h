// Note [8-bit pool rows]: a QDQ ResNet's stem MaxPool runs on the 8-bit values (fuse_qdq_int8):
// 64 planes of 112x112 bytes, 3x3 at stride 2, padding 1. The generic path made each output row
// from the window rows' column maxima and then picked every other one (a scalar loop per output:
// 0.29 ms on its 200K outputs, onnxruntime's channels-last pool 0.06). Where a row fits two zmm
// (at most 128 input bytes) and its outputs one (at most 64), with AVX-512 VBMI, each window
// column t is one vpermt2b of the row's two registers by the output positions' input columns
// (ow * stride - pad + t * dilation, made once at plan time), its lanes outside the row masked
// off; the output row is the max over the window's columns. A max is exact: the bits are the
// generic path's.
#pragma once
#include <cstdint>
#include <vector>

#include "ops/conv/conv_geometry.h"

namespace dnnx {

// The per-column permutations of one geometry's rows: empty where the form does not apply.
struct BytePoolRows {
  std::vector<uint8_t> index;   // [tap][64]: the input column of each output lane
  std::vector<uint64_t> valid;  // [tap]: the lanes whose column lies inside the row
  int64_t in_w = 0, out_w = 0;
  bool usable() const { return !valid.empty(); }
};

// g expanded to 3 spatial dims; its last axis is the row.
BytePoolRows plan_byte_pool_rows(const ConvGeometry& g);
// y[ow] = max over the taps of src[column], ow < out_w (signed or unsigned bytes).
void pool_byte_row(const BytePoolRows& p, const uint8_t* src, bool is_signed, uint8_t* y);

}  // namespace dnnx
