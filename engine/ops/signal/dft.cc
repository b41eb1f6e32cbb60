// DFT's and STFT's meaning (ops/signal/dft.h).
#include "ops/signal/dft.h"

#include "ops/const_inputs.h"
#include "ops/signal/signal.h"

namespace dnnx {

namespace {

constexpr int kDftOpset = 17, kAxisInputOpset = 20, kStftOpset = 17;
constexpr size_t kDftLength = 1, kDftAxis = 2;
constexpr size_t kStep = 1, kWindow = 2, kFrameLength = 3;

void require_signal(const Node& node, const TensorInfo& x, const char* what, size_t min_rank) {
  require_float(node, x, what);
  if (x.shape.size() < min_rank || (x.shape.back() != 1 && x.shape.back() != 2)) {
    node_fail<InvalidModelError>(node, std::string(what) + " " + shape_str(x.shape) +
                                           " must end in a dim of 1 (real) or 2 (complex)");
  }
}

std::vector<TensorInfo> infer_dft(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  require_signal(node, x, "input", 2);
  const DftGeometry g = dft_geometry(node, inputs);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = node.opset >= kAxisInputOpset ? -2 : node.attr_int("axis", 1);
  if (node.opset >= kAxisInputOpset && input_present(inputs, kDftAxis)) axis = scalar_int_input(node, inputs, kDftAxis, "axis");
  axis = normalize_axis(node, axis, rank);
  Shape y = x.shape;
  y[axis] = g.out_len;
  y.back() = g.real_out() ? 1 : 2;
  return {TensorInfo{y, x.dtype}};
}

std::vector<TensorInfo> infer_stft(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "signal");
  require_signal(node, x, "signal", 3);
  const StftGeometry g = stft_geometry(node, inputs);
  return {TensorInfo{{g.batch, g.frames, g.bins, 2}, x.dtype}};
}

}  // namespace

DftGeometry dft_geometry(const Node& node, const std::vector<ValueInfo>& inputs) {
  DftGeometry g;
  const Shape& x = inputs[0].info.shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = node.opset >= kAxisInputOpset ? -2 : node.attr_int("axis", 1);
  if (node.opset >= kAxisInputOpset && input_present(inputs, kDftAxis)) axis = scalar_int_input(node, inputs, kDftAxis, "axis");
  axis = normalize_axis(node, axis, rank);
  if (axis == rank - 1) {
    node_fail<InvalidModelError>(node, "axis " + std::to_string(axis) + " is input " + shape_str(x) +
                                           "'s last dim, which holds the real and imaginary parts");
  }
  for (int64_t d = 0; d < axis; ++d) g.outer *= x[d];
  for (int64_t d = axis + 1; d < rank - 1; ++d) g.inner *= x[d];
  g.in_len = x[axis];
  g.in_complex = x.back() == 2;
  g.inverse = node.attr_int("inverse", 0) != 0;
  g.onesided = node.attr_int("onesided", 0) != 0;
  g.length = g.real_out() ? 2 * (g.in_len - 1) : g.in_len;
  if (input_present(inputs, kDftLength)) g.length = scalar_int_input(node, inputs, kDftLength, "dft_length");
  if (g.length <= 0) node_fail<InvalidModelError>(node, "dft_length " + std::to_string(g.length) + " must be positive");
  g.out_len = g.real_out() || !g.onesided ? g.length : g.length / 2 + 1;
  return g;
}

StftGeometry stft_geometry(const Node& node, const std::vector<ValueInfo>& inputs) {
  StftGeometry g;
  const Shape& x = inputs[0].info.shape;
  if (x.size() != 3) node_fail<InvalidModelError>(node, "signal " + shape_str(x) + " must be [batch, length, 1 or 2]");
  g.batch = x[0];
  g.signal_len = x[1];
  g.in_complex = x[2] == 2;
  g.step = scalar_int_input(node, inputs, kStep, "frame_step");
  g.has_window = input_present(inputs, kWindow);
  if (g.has_window) {
    const TensorInfo& w = inputs[kWindow].info;
    if (w.shape.size() != 1 || w.dtype != inputs[0].info.dtype) {
      node_fail<InvalidModelError>(node, "window " + shape_str(w.shape) + " must be 1-D of the signal's dtype");
    }
    g.length = w.shape[0];
  }
  if (input_present(inputs, kFrameLength)) {
    const int64_t l = scalar_int_input(node, inputs, kFrameLength, "frame_length");
    if (g.has_window && l != g.length) {
      node_fail<InvalidModelError>(node, "frame_length " + std::to_string(l) + " must equal the window's length " +
                                             std::to_string(g.length));
    }
    g.length = l;
  } else if (!g.has_window) {
    node_fail<InvalidModelError>(node, "one of window and frame_length must be given");
  }
  if (g.step <= 0 || g.length <= 0 || g.length > g.signal_len) {
    node_fail<InvalidModelError>(node, "frame_step " + std::to_string(g.step) + " and frame length " +
                                           std::to_string(g.length) + " must be positive, the frame no longer than "
                                           "the signal's " + std::to_string(g.signal_len) + " samples");
  }
  g.frames = (g.signal_len - g.length) / g.step + 1;
  g.bins = node.attr_int("onesided", 1) != 0 ? g.length / 2 + 1 : g.length;
  return g;
}

void register_dft_ops(OpRegistry& r) {
  OpDef dft;
  dft.min_opset = kDftOpset;
  dft.validate = [](const Node& node) {
    if (node.opset >= kAxisInputOpset) {
      node.expect_only_attrs({"inverse", "onesided"});
    } else {
      node.expect_only_attrs({"axis", "inverse", "onesided"});
    }
  };
  dft.infer = infer_dft;
  dft.value_inputs = {kDftLength, kDftAxis};
  r.add("DFT", std::move(dft));

  OpDef stft;
  stft.min_opset = kStftOpset;
  stft.validate = [](const Node& node) { node.expect_only_attrs({"onesided"}); };
  stft.infer = infer_stft;
  stft.value_inputs = {kStep, kFrameLength};
  r.add("STFT", std::move(stft));
}

}  // namespace dnnx
