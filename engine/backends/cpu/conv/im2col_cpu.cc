// im2col copies each tap's window row of the input into col; col2im adds each col row back
// at the positions it was read from, using the same in-bounds ranges (outputs_inside for W,
// window_start for D and H), so that the two stay exact adjoints.
#include "backends/cpu/conv/im2col_cpu.h"

#include <algorithm>
#include <cstring>

namespace dnnx {

namespace {

enum Dim { kD = 0, kH = 1, kW = 2 };

// A vectorizing clone (GCC picks it at load time on a CPU with AVX2): a strided row copy is a
// gather, which AVX2 does 8 at a time from shuffled loads. ResNet-50's 7x7 stride-2 stem unrolls
// 1.8M floats per image this way.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DNNX_IM2COL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define DNNX_IM2COL_CLONES
#endif

// One row of col: what every output position [OD, OH, OW] of channel xc [D, H, W] sees
// through tap (kd, kh, kw), 0 where the tap falls in the padding.
DNNX_IM2COL_CLONES void im2col_tap(const ConvGeometry& g, const float* xc, int64_t kd, int64_t kh, int64_t kw,
                float* dst) {
  const int64_t in_d = g.input[kD], in_h = g.input[kH], in_w = g.input[kW];
  const int64_t out_w = g.output[kW], stride_w = g.strides[kW];
  // Output column ow reads input column ow * stride_w + w0, inside the row for ow in [lo, hi).
  const int64_t w0 = kw * g.dilations[kW] - g.pads_begin[kW];
  const IndexRange inside = g.outputs_inside(kW, kw);
  const int64_t lo = inside.lo, hi = inside.hi;
  for (int64_t od = 0; od < g.output[kD]; ++od) {
    const int64_t id = g.window_start(kD, od) + kd * g.dilations[kD];
    for (int64_t oh = 0; oh < g.output[kH]; ++oh, dst += out_w) {
      const int64_t ih = g.window_start(kH, oh) + kh * g.dilations[kH];
      if (id < 0 || id >= in_d || ih < 0 || ih >= in_h) {
        std::fill(dst, dst + out_w, 0.0f);
        continue;
      }
      const float* src = xc + (id * in_h + ih) * in_w;
      std::fill(dst, dst + lo, 0.0f);
      if (stride_w == 1) {
        std::memcpy(dst + lo, src + lo + w0, static_cast<size_t>(hi - lo) * sizeof(float));
      } else if (stride_w == 2) {  // a constant stride: the clone's shuffles (ResNet's strided convs)
        for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * 2 + w0];
      } else {
        for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * stride_w + w0];
      }
      std::fill(dst + hi, dst + out_w, 0.0f);
    }
  }
}

// The adjoint of im2col_tap: xc [D, H, W] += what `row` holds for tap (kd, kh, kw).
void col2im_tap(const ConvGeometry& g, const float* row, int64_t kd, int64_t kh, int64_t kw, float* xc) {
  const int64_t in_d = g.input[kD], in_h = g.input[kH], in_w = g.input[kW];
  const int64_t out_w = g.output[kW], stride_w = g.strides[kW];
  const int64_t w0 = kw * g.dilations[kW] - g.pads_begin[kW];
  const IndexRange inside = g.outputs_inside(kW, kw);
  for (int64_t od = 0; od < g.output[kD]; ++od) {
    const int64_t id = g.window_start(kD, od) + kd * g.dilations[kD];
    for (int64_t oh = 0; oh < g.output[kH]; ++oh, row += out_w) {
      const int64_t ih = g.window_start(kH, oh) + kh * g.dilations[kH];
      if (id < 0 || id >= in_d || ih < 0 || ih >= in_h) continue;
      float* dst = xc + (id * in_h + ih) * in_w;
      for (int64_t ow = inside.lo; ow < inside.hi; ++ow) dst[ow * stride_w + w0] += row[ow];
    }
  }
}

}  // namespace

void im2col(const ConvShape& s, const float* x, float* col) {
  const ConvGeometry& g = s.g;
  float* row = col;
  for (int64_t c = 0; c < s.group_channels(); ++c) {
    const float* xc = x + c * g.input_size();
    for (int64_t kd = 0; kd < g.kernel[kD]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[kH]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[kW]; ++kw, row += g.output_size()) {
          im2col_tap(g, xc, kd, kh, kw, row);
        }
      }
    }
  }
}

void im2col_rows(const ConvShape& s, const float* x, float* col, int64_t row_begin, int64_t row_end) {
  const ConvGeometry& g = s.g;
  const int64_t kw_n = g.kernel[kW], kh_n = g.kernel[kH], kd_n = g.kernel[kD];
  for (int64_t r = row_begin; r < row_end; ++r) {  // r = ((c*KD + kd)*KH + kh)*KW + kw
    const int64_t kw = r % kw_n, kh = r / kw_n % kh_n, kd = r / (kw_n * kh_n) % kd_n, c = r / (kw_n * kh_n * kd_n);
    im2col_tap(g, x + c * g.input_size(), kd, kh, kw, col + r * g.output_size());
  }
}

DNNX_IM2COL_CLONES void gather_strided(const ConvShape& s, const float* x, float* col) {
  const ConvGeometry& g = s.g;
  const int64_t in_h = g.input[kH], in_w = g.input[kW];
  const int64_t step_d = g.strides[kD] * in_h * in_w, step_h = g.strides[kH] * in_w, step_w = g.strides[kW];
  const int64_t out_w = g.output[kW];
  for (int64_t c = 0; c < s.group_channels(); ++c) {
    const float* xc = x + c * g.input_size();
    for (int64_t od = 0; od < g.output[kD]; ++od) {
      for (int64_t oh = 0; oh < g.output[kH]; ++oh, col += out_w) {
        const float* src = xc + od * step_d + oh * step_h;
        if (step_w == 2) {  // ResNet's downsample projections
          for (int64_t ow = 0; ow < out_w; ++ow) col[ow] = src[ow * 2];
        } else {
          for (int64_t ow = 0; ow < out_w; ++ow) col[ow] = src[ow * step_w];
        }
      }
    }
  }
}

void col2im(const ConvShape& s, const float* col, float* x) {
  const ConvGeometry& g = s.g;
  std::fill(x, x + s.group_channels() * g.input_size(), 0.0f);
  const float* row = col;
  for (int64_t c = 0; c < s.group_channels(); ++c) {
    float* xc = x + c * g.input_size();
    for (int64_t kd = 0; kd < g.kernel[kD]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[kH]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[kW]; ++kw, row += g.output_size()) {
          col2im_tap(g, row, kd, kh, kw, xc);
        }
      }
    }
  }
}

}  // namespace dnnx
