#include "backends/cuda/conv/conv_layout.h"

#include <algorithm>
#include <cstdlib>

#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/runtime/tensor_desc.h"

namespace dnnx::cuda {

std::string symmetric_pads_reason(const Node& node, const std::string& prefix) {
  const std::string auto_pad = node.attr_string(prefix + "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return "auto_pad " + auto_pad + " (pads that depend on the shapes)";
  const std::vector<int64_t> pads = node.attr_ints(prefix + "pads", {});
  const size_t half = pads.size() / 2;
  for (size_t i = 0; i < half; ++i) {
    if (pads[i] != pads[i + half]) return "pads that differ between the two ends";
  }
  return "";
}

namespace {

constexpr size_t kMinSpatialRank = 2;

// Splits ONNX's pads into cuDNN's symmetric part and the excess the pad kernel fills.
ExplicitPad plan_padding(const ConvGeometry& g, int64_t planes, DType dtype, std::vector<int>& symmetric) {
  ExplicitPad pad;
  pad.planes = planes;
  pad.dtype = dtype;
  const size_t offset = 3 - g.rank();  // unit dims first in the pad kernel's 3-D view
  for (size_t i = 0; i < g.rank(); ++i) {
    const int64_t b = g.pads_begin[i], e = g.pads_end[i];
    symmetric.push_back(static_cast<int>(std::min(b, e)));
    pad.in[offset + i] = g.input[i];
    pad.begin[offset + i] = std::max<int64_t>(0, b - e);
    pad.out[offset + i] = g.input[i] + std::abs(b - e);
    pad.needed = pad.needed || b != e;
  }
  if (pad.needed) {
    pad.bytes =
        align_conv_workspace(static_cast<size_t>(planes * pad.out[0] * pad.out[1] * pad.out[2]) * dtype_size(dtype));
  }
  return pad;
}

}  // namespace

ConvLayout plan_conv_layout(const Node& node, const Shape& xs, const Shape& ws, DType dtype, bool channels_last) {
  return plan_conv_layout(
      node, make_conv_geometry(node, WindowOp::Conv, Shape(xs.begin() + 2, xs.end()), Shape(ws.begin() + 2, ws.end())),
      xs, ws, dtype, channels_last);
}

ConvLayout plan_conv_layout(const Node& node, const ConvGeometry& onnx, const Shape& xs, const Shape& ws, DType dtype,
                            bool channels_last) {
  ConvLayout l;
  l.dtype = dtype;
  l.channels_last = channels_last;
  l.onnx = onnx;
  l.g = l.onnx.expanded_to(std::max(kMinSpatialRank, l.onnx.rank()));
  l.pad = plan_padding(l.g, xs[0] * xs[1], dtype, l.symmetric_pads);
  l.x_dims = {xs[0], xs[1]};
  l.w_dims = {ws[0], ws[1]};
  l.y_dims = {xs[0], ws[0]};
  for (size_t i = 0; i < l.g.rank(); ++i) {
    l.x_dims.push_back(l.pad.needed ? l.pad.out[3 - l.g.rank() + i] : l.g.input[i]);
    l.w_dims.push_back(l.g.kernel[i]);
    l.y_dims.push_back(l.g.output[i]);
  }
  if (channels_last && (l.pad.needed || l.g.rank() != 2)) {
    node_fail<DeviceError>(node, "a channels-last conv needs 2 spatial dims and the same pads at both ends");
  }
  return l;
}

PadCrop pad_crop(const ExplicitPad& pad) {
  PadCrop c;
  c.dims.rank = 4;
  const int64_t sizes[4] = {pad.planes, pad.in[0], pad.in[1], pad.in[2]};
  const int64_t strides[4] = {pad.out[0] * pad.out[1] * pad.out[2], pad.out[1] * pad.out[2], pad.out[2], 1};
  for (int i = 0; i < 4; ++i) {
    c.dims.size[i] = sizes[i];
    c.dims.stride_a[i] = strides[i];
  }
  c.offset = pad.begin[0] * strides[1] + pad.begin[1] * strides[2] + pad.begin[2];
  c.count = sizes[0] * sizes[1] * sizes[2] * sizes[3];
  return c;
}

void set_conv_descriptors(const CudaContext& ctx, const ConvLayout& l, ConvDescriptors& d) {
  set_tensor(d.x, l.x_dims, l.dtype, l.channels_last);
  set_filter(d.w, l.w_dims, l.dtype, l.channels_last);
  set_tensor(d.y, l.y_dims, l.dtype, l.channels_last);
  const std::vector<int> strides = to_int(l.g.strides), dilations = to_int(l.g.dilations);
  check(cudnnSetConvolutionNdDescriptor(d.conv, static_cast<int>(l.g.rank()), l.symmetric_pads.data(), strides.data(),
                                        dilations.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        "cudnnSetConvolutionNdDescriptor");
  check(cudnnSetConvolutionGroupCount(d.conv, static_cast<int>(l.g.group)), "cudnnSetConvolutionGroupCount");
  check(cudnnSetConvolutionMathType(d.conv, conv_math_type(conv_precision(ctx.options.precision, l.dtype))),
        "cudnnSetConvolutionMathType");

  std::vector<int> cudnn_y(l.y_dims.size());
  check(cudnnGetConvolutionNdForwardOutputDim(d.conv, d.x, d.w, static_cast<int>(cudnn_y.size()), cudnn_y.data()),
        "cudnnGetConvolutionNdForwardOutputDim");
  if (cudnn_y != to_int(l.y_dims)) throw DeviceError("cuDNN's output dims differ from ONNX's " + shape_str(l.y_dims));
}

}  // namespace dnnx::cuda
