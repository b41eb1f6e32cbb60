#include "ops/conv/conv_geometry.h"

#include "ops/op.h"

#include <algorithm>

namespace dnnx {

namespace {

AutoPad parse_auto_pad(const Node& node) {
  const std::string s = node.attr_string("auto_pad", "NOTSET");
  if (s == "NOTSET") return AutoPad::NotSet;
  if (s == "SAME_UPPER") return AutoPad::SameUpper;
  if (s == "SAME_LOWER") return AutoPad::SameLower;
  if (s == "VALID") return AutoPad::Valid;
  node_fail<InvalidModelError>(node, "auto_pad '" + s +
                                         "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
}

// floor(a / b) and ceil(a / b) for b > 0 and any sign of a.
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

bool all_zero(const Shape& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; });
}

void require_all(const Node& node, const char* attr, const Shape& v, int64_t min_value) {
  for (int64_t x : v) {
    if (x < min_value) {
      node_fail<InvalidModelError>(node, std::string(attr) + " " + shape_str(v) + " must all be >= " +
                                             std::to_string(min_value));
    }
  }
}

void require_length(const Node& node, const char* attr, const Shape& v, size_t expected,
                    const std::string& why) {
  if (v.size() != expected) {
    node_fail<InvalidModelError>(node, std::string(attr) + " " + shape_str(v) + " has " +
                                           std::to_string(v.size()) + " values, expected " +
                                           std::to_string(expected) + " (" + why + ")");
  }
}

// An attribute with one value per spatial dim; `fallback` fills it when absent.
Shape per_dim_attr(const Node& node, const char* attr, size_t rank, int64_t fallback,
                   const std::string& why) {
  Shape v = node.attr_ints(attr, Shape(rank, fallback));
  require_length(node, attr, v, rank, why);
  return v;
}

// The output size of one dim once its pads are known. ceil_mode drops a last window that would
// start inside the end padding (onnxruntime and PyTorch agree on this).
int64_t output_dim(const ConvGeometry& g, size_t i, bool round_up) {
  const int64_t span = g.input[i] + g.pads_begin[i] + g.pads_end[i] - g.effective_kernel(i);
  const int64_t s = g.strides[i];
  int64_t out = (round_up ? (span + s - 1) / s : span / s) + 1;
  if (round_up && (out - 1) * s >= g.input[i] + g.pads_begin[i]) --out;
  return out;
}

// SAME_*: the output is ceil(in / stride) and the pads make up the difference; the odd pad
// goes at the end (SAME_UPPER) or the beginning (SAME_LOWER).
void same_pads(ConvGeometry& g, size_t i) {
  const int64_t out = (g.input[i] + g.strides[i] - 1) / g.strides[i];
  const int64_t needed = (out - 1) * g.strides[i] + g.effective_kernel(i) - g.input[i];
  const int64_t total = std::max<int64_t>(0, needed);
  const int64_t small = total / 2;
  g.pads_begin[i] = g.auto_pad == AutoPad::SameUpper ? small : total - small;
  g.pads_end[i] = total - g.pads_begin[i];
}

}  // namespace

bool ConvGeometry::has_padding() const { return !all_zero(pads_begin) || !all_zero(pads_end); }

// 0 <= start + k * dilation < in, for k in [0, kernel).
IndexRange ConvGeometry::taps_inside(size_t dim, int64_t out) const {
  const int64_t start = window_start(dim, out);
  const int64_t d = dilations[dim];
  const int64_t lo = std::clamp<int64_t>(ceil_div(-start, d), 0, kernel[dim]);
  return {lo, std::clamp<int64_t>(floor_div(input[dim] - 1 - start, d) + 1, lo, kernel[dim])};
}

// 0 <= o * stride + offset < in, for o in [0, output), with offset = tap * dilation - pad.
IndexRange ConvGeometry::outputs_inside(size_t dim, int64_t tap) const {
  const int64_t offset = tap * dilations[dim] - pads_begin[dim];
  const int64_t s = strides[dim];
  const int64_t lo = std::clamp<int64_t>(ceil_div(-offset, s), 0, output[dim]);
  return {lo, std::clamp<int64_t>(floor_div(input[dim] - 1 - offset, s) + 1, lo, output[dim])};
}

bool ConvGeometry::is_pointwise() const {
  const auto ones = [](const Shape& v) {
    return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
  };
  return ones(kernel) && ones(strides) && !has_padding();
}

ConvGeometry ConvGeometry::expanded_to(size_t spatial_rank) const {
  ConvGeometry g = *this;
  const size_t extra = spatial_rank > rank() ? spatial_rank - rank() : 0;
  const auto prepend = [extra](Shape& v, int64_t value) { v.insert(v.begin(), extra, value); };
  prepend(g.kernel, 1);
  prepend(g.strides, 1);
  prepend(g.dilations, 1);
  prepend(g.pads_begin, 0);
  prepend(g.pads_end, 0);
  prepend(g.input, 1);
  prepend(g.output, 1);
  return g;
}

std::string ConvGeometry::kernel_str() const {
  std::string out;
  for (size_t i = 0; i < kernel.size(); ++i) out += (i ? "x" : "") + std::to_string(kernel[i]);
  return out;
}

void check_window_attrs(const Node& node, WindowOp op) {
  const AutoPad auto_pad = parse_auto_pad(node);
  const Shape kernel = node.attr_ints("kernel_shape", {});
  const Shape strides = node.attr_ints("strides", {});
  const Shape dilations = node.attr_ints("dilations", {});
  const Shape pads = node.attr_ints("pads", {});
  if (op == WindowOp::Pool && kernel.empty()) {
    node_fail<InvalidModelError>(node, "attribute 'kernel_shape' is required");
  }
  require_all(node, "kernel_shape", kernel, 1);
  require_all(node, "strides", strides, 1);
  require_all(node, "dilations", dilations, 1);
  require_all(node, "pads", pads, 0);
  if (pads.size() % 2 != 0) {
    node_fail<InvalidModelError>(node, "pads " + shape_str(pads) +
                                           " must hold a begin and an end value per spatial dim");
  }
  if (!kernel.empty()) {
    const std::string why = "kernel_shape " + shape_str(kernel) + " has " +
                            std::to_string(kernel.size()) + " spatial dims";
    if (node.has_attr("strides")) require_length(node, "strides", strides, kernel.size(), why);
    if (node.has_attr("dilations")) require_length(node, "dilations", dilations, kernel.size(), why);
    if (node.has_attr("pads")) require_length(node, "pads", pads, 2 * kernel.size(), why);
  }
  if (auto_pad != AutoPad::NotSet && !all_zero(pads)) {
    node_fail<InvalidModelError>(node, "pads " + shape_str(pads) + " cannot be combined with auto_pad '" +
                                           node.attr_string("auto_pad", "") + "'");
  }
  if (op == WindowOp::Conv && node.attr_int("group", 1) < 1) {
    node_fail<InvalidModelError>(node, "group " + std::to_string(node.attr_int("group", 1)) +
                                           " must be >= 1");
  }
  if (op == WindowOp::Pool) {
    const int64_t ceil_mode = node.attr_int("ceil_mode", 0);
    if (ceil_mode != 0 && ceil_mode != 1) {
      node_fail<InvalidModelError>(node, "ceil_mode " + std::to_string(ceil_mode) + " must be 0 or 1");
    }
  }
}

ConvGeometry make_conv_geometry(const Node& node, WindowOp op, const Shape& input,
                                const Shape& kernel) {
  const size_t rank = input.size();
  const std::string why = "X has " + std::to_string(rank) + " spatial dims " + shape_str(input);
  ConvGeometry g;
  g.auto_pad = parse_auto_pad(node);
  g.ceil_mode = op == WindowOp::Pool && node.attr_int("ceil_mode", 0) != 0;
  g.group = op == WindowOp::Conv ? node.attr_int("group", 1) : 1;
  g.kernel = kernel;
  require_length(node, "kernel_shape", g.kernel, rank, why);
  if (node.has_attr("kernel_shape") && node.attr_ints("kernel_shape", {}) != kernel) {
    node_fail<InvalidModelError>(node, "kernel_shape " + shape_str(node.attr_ints("kernel_shape", {})) +
                                           " does not match the weight's spatial dims " +
                                           shape_str(kernel));
  }
  g.strides = per_dim_attr(node, "strides", rank, 1, why);
  g.dilations = per_dim_attr(node, "dilations", rank, 1, why);
  const Shape pads = per_dim_attr(node, "pads", 2 * rank, 0, why);
  g.pads_begin.assign(pads.begin(), pads.begin() + rank);
  g.pads_end.assign(pads.begin() + rank, pads.end());
  g.input = input;
  g.output.resize(rank);
  const bool same = g.auto_pad == AutoPad::SameUpper || g.auto_pad == AutoPad::SameLower;
  for (size_t i = 0; i < rank; ++i) {
    if (same) same_pads(g, i);
    if (op == WindowOp::Pool && std::max(g.pads_begin[i], g.pads_end[i]) >= g.effective_kernel(i)) {
      node_fail<InvalidModelError>(node, "pads " + shape_str(pads) + " must be smaller than the window " +
                                             shape_str(kernel) + " (dilations " +
                                             shape_str(g.dilations) + ")");
    }
    if (g.input[i] + g.pads_begin[i] + g.pads_end[i] < g.effective_kernel(i)) {
      node_fail<InvalidModelError>(
          node, "the window " + shape_str(kernel) + " (dilations " + shape_str(g.dilations) +
                    ") is larger than the padded input: X spatial dims " + shape_str(input) +
                    ", pads begin " + shape_str(g.pads_begin) + " end " + shape_str(g.pads_end));
    }
    // SAME fixes the output at ceil(in / stride) whatever ceil_mode says; VALID (zero pads)
    // honours ceil_mode, as onnxruntime does. For a dilated SAME window the pads come from the
    // dilated kernel, as the ONNX spec says (onnxruntime's MaxPool uses the undilated one).
    g.output[i] = output_dim(g, i, g.ceil_mode && !same);
  }
  return g;
}

void check_conv_operands(const Node& node, const TensorInfo& x, const TensorInfo& w) {
  require_float(node, x, "input X");
  require_float(node, w, "input W");
  const size_t rank = x.shape.size();
  if (rank < 2 + kMinSpatialRank || rank > 2 + kMaxSpatialRank) {
    node_fail<UnsupportedModelError>(node, "X " + shape_str(x.shape) +
                                               " must be [N, C, spatial...] with 1 to 3 spatial dims");
  }
  if (w.shape.size() != rank) {
    node_fail<InvalidModelError>(node, "W " + shape_str(w.shape) + " must have the rank of X " + shape_str(x.shape));
  }
}

}  // namespace dnnx
