// Resize and Upsample: attributes, the scales / sizes / roi inputs, output shape and tap tables
// (ops/resample/resize.h). The formulas are onnx's reference implementation's (onnx/reference/ops/
// op_resize.py), which onnxruntime agrees with on every node test dnnx runs:
//   Resize-10, Upsample    asymmetric coordinates, nearest rounds down when upsampling and up
//                          when downsampling (onnxruntime's opset < 11 rule)
//   Resize-11/13           roi, scales, sizes inputs; coordinate_transformation_mode, nearest_mode,
//                          cubic_coeff_a, exclude_outside, extrapolation_value
//   Resize-18/19           axes, keep_aspect_ratio_policy, antialias; half_pixel_symmetric (19)
#include "ops/resample/resize.h"

#include <algorithm>
#include <cmath>

#include "ops/const_inputs.h"

namespace dnnx {

namespace {

constexpr int kResizeInputsOpset = 11;  // X, roi, scales, sizes (Resize-10: X, scales)
constexpr int kAxesOpset = 18;          // axes, keep_aspect_ratio_policy, antialias
constexpr int kSymmetricOpset = 19;     // half_pixel_symmetric

bool is_upsample(const Node& node) { return node.op_type == "Upsample"; }
// Resize-10 and Upsample share one meaning: asymmetric coordinates, "simple" nearest rounding.
bool legacy(const Node& node) { return is_upsample(node) || node.opset < kResizeInputsOpset; }

struct InputSlots {
  int roi = -1, scales = -1, sizes = -1;  // -1: the op has no such input
};
InputSlots input_slots(const Node& node) {
  if (is_upsample(node)) return {-1, node.opset >= 9 ? 1 : -1, -1};
  if (node.opset < kResizeInputsOpset) return {-1, 1, -1};
  return {1, 2, 3};
}

ResizeMode parse_mode(const Node& node) {
  const std::string s = node.attr_string("mode", "nearest");
  if (s == "nearest") return ResizeMode::Nearest;
  if (s == "linear" || (is_upsample(node) && s == "bilinear")) return ResizeMode::Linear;
  if (s == "cubic" && !legacy(node)) return ResizeMode::Cubic;
  node_fail<UnsupportedModelError>(node, "mode '" + s + "' is not one of nearest, linear" +
                                             (legacy(node) ? "" : ", cubic"));
}

ResizeCoord parse_coord(const Node& node) {
  if (legacy(node)) return ResizeCoord::Asymmetric;
  const std::string s = node.attr_string("coordinate_transformation_mode", "half_pixel");
  if (s == "half_pixel") return ResizeCoord::HalfPixel;
  if (s == "pytorch_half_pixel") return ResizeCoord::PytorchHalfPixel;
  if (s == "align_corners") return ResizeCoord::AlignCorners;
  if (s == "asymmetric") return ResizeCoord::Asymmetric;
  if (s == "tf_crop_and_resize") return ResizeCoord::TfCropAndResize;
  if (s == "half_pixel_symmetric" && node.opset >= kSymmetricOpset) return ResizeCoord::HalfPixelSymmetric;
  node_fail<UnsupportedModelError>(node, "coordinate_transformation_mode '" + s + "' is not supported at opset " +
                                             std::to_string(node.opset));
}

ResizeNearest parse_nearest(const Node& node) {
  if (legacy(node)) return ResizeNearest::Simple;
  const std::string s = node.attr_string("nearest_mode", "round_prefer_floor");
  if (s == "round_prefer_floor") return ResizeNearest::RoundPreferFloor;
  if (s == "round_prefer_ceil") return ResizeNearest::RoundPreferCeil;
  if (s == "floor") return ResizeNearest::Floor;
  if (s == "ceil") return ResizeNearest::Ceil;
  node_fail<UnsupportedModelError>(node, "nearest_mode '" + s + "' is not one of round_prefer_floor, "
                                         "round_prefer_ceil, floor, ceil");
}

void validate_resize(const Node& node) {
  if (is_upsample(node)) {
    node.expect_only_attrs(node.opset < 9 ? std::vector<std::string>{"mode", "scales"} : std::vector<std::string>{"mode"});
  } else if (node.opset < kResizeInputsOpset) {
    node.expect_only_attrs({"mode"});
  } else {
    std::vector<std::string> known = {"coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside",
                                      "extrapolation_value", "mode", "nearest_mode"};
    if (node.opset >= kAxesOpset) known.insert(known.end(), {"antialias", "axes", "keep_aspect_ratio_policy"});
    node.expect_only_attrs(known);
  }
  const ResizeMode mode = parse_mode(node);
  parse_coord(node);
  parse_nearest(node);
  if (node.attr_int("antialias", 0) != 0 && mode == ResizeMode::Nearest) {
    node_fail<InvalidModelError>(node, "antialias applies to linear and cubic modes only");
  }
  const std::string policy = node.attr_string("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    node_fail<InvalidModelError>(node, "keep_aspect_ratio_policy '" + policy +
                                           "' is not one of stretch, not_larger, not_smaller");
  }
}

// A float input's values (scales, roi); nullopt when it is omitted or empty.
std::optional<std::vector<double>> constant_floats(const Node& node, const std::vector<ValueInfo>& inputs, int slot,
                                                   const char* what) {
  if (slot < 0 || !input_present(inputs, static_cast<size_t>(slot))) return std::nullopt;
  const ValueInfo& v = inputs[slot];
  if (!v.constant) {
    node_fail<UnsupportedModelError>(node, std::string("input '") + what +
                                               "' must be known when the plan is built (Note [value inputs]); "
                                               "this one comes from a layer that runs on the device");
  }
  if (numel(v.info.shape) == 0) return std::nullopt;
  std::vector<double> out;
  if (v.info.dtype == DType::Float32) {
    const float* p = v.constant->as<float>();
    out.assign(p, p + numel(v.info.shape));
  } else if (!is_floating(v.info.dtype)) {
    for (int64_t i : v.constant->to_int64()) out.push_back(static_cast<double>(i));
  } else {
    node_fail<UnsupportedModelError>(node, std::string("input '") + what + "' must be float32, got " +
                                               dtype_name(v.info.dtype));
  }
  return out;
}

// The dims the scales / sizes / roi values apply to: `axes` (opset 18), or every dim.
std::vector<int64_t> resized_axes(const Node& node, int64_t rank) {
  std::vector<int64_t> axes;
  if (node.has_attr("axes")) {
    for (int64_t a : node.attr_ints("axes", {})) axes.push_back(normalize_axis(node, a, rank));
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  return axes;
}

void require_count(const Node& node, const char* what, size_t got, size_t want, const Shape& x) {
  if (got != want) {
    node_fail<InvalidModelError>(node, std::string(what) + " has " + std::to_string(got) + " values, expected " +
                                           std::to_string(want) + " for X " + shape_str(x));
  }
}

std::vector<TensorInfo> infer_resize(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_float(node, x, "input X");
  return {TensorInfo{resize_params(node, inputs, x.shape).out, x.dtype}};
}

// Cubic convolution kernel (Keys) with parameter a, and the linear (triangle) kernel.
double cubic_kernel(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}
double linear_kernel(double x) { return std::max(0.0, 1 - std::fabs(x)); }

// Taps of one dim for linear and cubic (antialias too): the window starts `start` taps before
// floor(src) (linear 0, cubic -1; antialias widens it by 1 / scale when downsampling), and tap j
// weighs kernel((start + j - frac) * s). An integer src counts as frac 1 from the index below it,
// as the reference does (the weights then single out src itself).
void interpolation_taps(const ResizeParams& p, const ResizeDim& d, ResizeTaps& t) {
  const bool cubic = p.mode == ResizeMode::Cubic;
  const double support = cubic ? 2 : 1;
  const double s = p.antialias ? std::min(d.scale, 1.0) : 1.0;
  const int64_t start = p.antialias ? static_cast<int64_t>(std::floor(-support / s)) + 1 : 1 - static_cast<int64_t>(support);
  t.taps = 2 - 2 * start;
  t.index.resize(d.out * t.taps);
  t.weight.resize(d.out * t.taps);
  t.outside.assign(d.out, 0);
  std::vector<double> w(t.taps);
  for (int64_t o = 0; o < d.out; ++o) {
    const double src = resize_source(p.coord, d, o);
    t.outside[o] = resize_outside(p.coord, d, src);
    int64_t lo = resize_floor(src);
    double frac = src - static_cast<double>(lo);
    if (frac == 0) {
      lo -= 1;
      frac = 1;
    }
    double sum = 0;
    for (int64_t j = 0; j < t.taps; ++j) {
      const double arg = (static_cast<double>(start + j) - frac) * s;
      w[j] = cubic ? cubic_kernel(arg, p.cubic_a) : linear_kernel(arg);
      const int64_t i = lo + start + j;
      if (p.exclude_outside && (i < 0 || i >= d.in)) w[j] = 0;
      sum += w[j];
    }
    const bool normalise = p.antialias || p.exclude_outside;
    for (int64_t j = 0; j < t.taps; ++j) {
      t.index[o * t.taps + j] = resize_clamp(lo + start + j, d.in);
      t.weight[o * t.taps + j] = static_cast<float>(normalise && sum != 0 ? w[j] / sum : w[j]);
    }
  }
}

}  // namespace

ResizeParams resize_params(const Node& node, const std::vector<ValueInfo>& inputs, const Shape& x) {
  ResizeParams p;
  p.mode = parse_mode(node);
  p.coord = parse_coord(node);
  p.nearest = parse_nearest(node);
  p.cubic_a = node.attr_float("cubic_coeff_a", -0.75f);
  p.exclude_outside = node.attr_int("exclude_outside", 0) != 0;
  p.antialias = node.attr_int("antialias", 0) != 0;
  p.extrapolation = node.attr_float("extrapolation_value", 0.0f);
  const int64_t rank = static_cast<int64_t>(x.size());
  const std::vector<int64_t> axes = resized_axes(node, rank);
  const InputSlots slots = input_slots(node);

  std::optional<std::vector<double>> scales = constant_floats(node, inputs, slots.scales, "scales");
  if (is_upsample(node) && node.opset < 9) {
    const std::vector<float> attr = node.attr_floats("scales", {});
    if (attr.empty()) node_fail<InvalidModelError>(node, "attribute 'scales' is required");
    scales = std::vector<double>(attr.begin(), attr.end());
  }
  std::optional<std::vector<int64_t>> sizes;
  if (slots.sizes >= 0 && input_present(inputs, slots.sizes) && numel(inputs[slots.sizes].info.shape) > 0) {
    sizes = constant_ints(node, inputs, slots.sizes, "sizes");
  }
  if (scales.has_value() == sizes.has_value()) {
    node_fail<InvalidModelError>(node, "exactly one of 'scales' and 'sizes' must be given");
  }
  p.dims.resize(rank);
  for (int64_t d = 0; d < rank; ++d) {
    p.dims[d].in = x[d];
    p.dims[d].out = x[d];
  }
  if (p.coord == ResizeCoord::TfCropAndResize) {
    const std::optional<std::vector<double>> roi = constant_floats(node, inputs, slots.roi, "roi");
    if (!roi) node_fail<InvalidModelError>(node, "tf_crop_and_resize needs the 'roi' input");
    require_count(node, "roi", roi->size(), 2 * axes.size(), x);
    for (size_t i = 0; i < axes.size(); ++i) {
      p.dims[axes[i]].roi_start = (*roi)[i];
      p.dims[axes[i]].roi_end = (*roi)[axes.size() + i];
    }
  }
  if (scales) {
    require_count(node, "scales", scales->size(), axes.size(), x);
    for (size_t i = 0; i < axes.size(); ++i) {
      const double s = (*scales)[i];
      if (!(s > 0)) node_fail<InvalidModelError>(node, "scales must be positive, got " + std::to_string(s));
      ResizeDim& dim = p.dims[axes[i]];
      dim.scale = s;
      // In float, as onnxruntime sizes it (1.4f * 5 is 7 there; onnx's reference, in double, says 6).
      dim.out = static_cast<int64_t>(std::floor(static_cast<float>(s) * static_cast<float>(dim.in)));
    }
  } else {
    require_count(node, "sizes", sizes->size(), axes.size(), x);
    const std::string policy = node.attr_string("keep_aspect_ratio_policy", "stretch");
    double kept = policy == "not_larger" ? INFINITY : 0;
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t size = (*sizes)[i];
      if (size < 0) node_fail<InvalidModelError>(node, "sizes must not be negative, got " + std::to_string(size));
      ResizeDim& dim = p.dims[axes[i]];
      if (dim.in == 0) {  // an empty dim stays empty (an empty batch: Note [empty tensors])
        if (size != 0) {
          node_fail<InvalidModelError>(node, "cannot resize the empty dim " + std::to_string(axes[i]) + " of X " +
                                                 shape_str(x) + " to " + std::to_string(size));
        }
        dim.out = 0;
        dim.scale = 1.0;
        continue;
      }
      dim.out = size;
      dim.scale = static_cast<double>(size) / static_cast<double>(dim.in);
      kept = policy == "not_larger" ? std::min(kept, dim.scale) : std::max(kept, dim.scale);
    }
    if (policy != "stretch") {  // one scale for every resized axis, rounded half up
      for (int64_t a : axes) {
        p.dims[a].scale = kept;
        p.dims[a].out = static_cast<int64_t>(kept * static_cast<double>(p.dims[a].in) + 0.5);
      }
    }
  }
  for (ResizeDim& dim : p.dims) {
    const bool whole_roi = p.coord != ResizeCoord::TfCropAndResize || (dim.roi_start == 0 && dim.roi_end == 1);
    dim.identity = dim.out == dim.in && std::fabs(dim.scale - 1) <= 1e-9 && whole_roi;
    p.out.push_back(dim.out);
  }
  return p;
}

std::vector<ResizeTaps> resize_taps(const ResizeParams& p) {
  std::vector<ResizeTaps> all(p.dims.size());
  for (size_t k = 0; k < p.dims.size(); ++k) {
    const ResizeDim& d = p.dims[k];
    ResizeTaps& t = all[k];
    if (d.identity || p.mode == ResizeMode::Nearest) {
      t.taps = 1;
      t.index.resize(d.out);
      t.weight.assign(d.out, 1.0f);
      t.outside.assign(d.out, 0);
      for (int64_t o = 0; o < d.out; ++o) {
        if (d.identity) {
          t.index[o] = o;
          continue;
        }
        const double src = resize_source(p.coord, d, o);
        t.outside[o] = resize_outside(p.coord, d, src);
        t.index[o] = resize_nearest(p.nearest, d, src);
      }
    } else {
      interpolation_taps(p, d, t);
    }
  }
  return all;
}

void register_resize_ops(OpRegistry& r) {
  OpDef resize;
  resize.validate = validate_resize;
  resize.infer = infer_resize;
  resize.value_inputs = {1, 2, 3};  // roi, scales, sizes (Resize-10: scales is input 1)
  resize.min_opset = 10;
  r.add("Resize", resize);
  OpDef upsample = resize;
  upsample.value_inputs = {1};  // Upsample-9's scales
  upsample.min_opset = 7;
  r.add("Upsample", std::move(upsample));
}

}  // namespace dnnx
