// GridSample's meaning (ops/resample/grid_sample.h).
#include "ops/resample/grid_sample.h"

namespace dnnx {

namespace {

constexpr int kGridSampleOpset = 16, kNdOpset = 20;

GridMode parse_mode(const Node& node) {
  const bool nd = node.opset >= kNdOpset;
  const std::string s = node.attr_string("mode", nd ? "linear" : "bilinear");
  if (s == "nearest") return GridMode::Nearest;
  if (s == (nd ? "linear" : "bilinear")) return GridMode::Linear;
  if (s == (nd ? "cubic" : "bicubic")) return GridMode::Cubic;
  node_fail<InvalidModelError>(node, "mode '" + s + "' is not one of " +
                                         (nd ? "linear, nearest, cubic" : "bilinear, nearest, bicubic") +
                                         " at opset " + std::to_string(node.opset));
}

GridPadding parse_padding(const Node& node) {
  const std::string s = node.attr_string("padding_mode", "zeros");
  if (s == "zeros") return GridPadding::Zeros;
  if (s == "border") return GridPadding::Border;
  if (s == "reflection") return GridPadding::Reflection;
  node_fail<InvalidModelError>(node, "padding_mode '" + s + "' is not one of zeros, border, reflection");
}

void validate_grid_sample(const Node& node) {
  node.expect_only_attrs({"align_corners", "mode", "padding_mode"});
  parse_mode(node);
  parse_padding(node);
}

std::vector<TensorInfo> infer_grid_sample(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_float(node, x, "input X");
  const TensorInfo& grid = require_input(node, inputs, 1, "Grid");
  require_float(node, grid, "input Grid");
  const GridSampleParams p = grid_sample_params(node, inputs);
  Shape y = {p.x[0], p.x[1]};
  y.insert(y.end(), p.grid.begin() + 1, p.grid.end() - 1);
  return {TensorInfo{y, x.dtype}};
}

}  // namespace

GridSampleParams grid_sample_params(const Node& node, const std::vector<ValueInfo>& inputs) {
  GridSampleParams p;
  p.mode = parse_mode(node);
  p.padding = parse_padding(node);
  p.align_corners = node.attr_int("align_corners", 0) != 0;
  p.x = inputs[0].info.shape;
  p.grid = inputs[1].info.shape;
  const size_t max_rank = node.opset >= kNdOpset ? 5 : 4;
  if (p.x.size() < 4 || p.x.size() > max_rank) {
    node_fail<UnsupportedModelError>(node, "X " + shape_str(p.x) + " must be 4-D" +
                                               (max_rank == 5 ? std::string(" or 5-D") : std::string(" at opset 16")));
  }
  const int64_t r = static_cast<int64_t>(p.x.size()) - 2;
  if (p.grid.size() != p.x.size() || p.grid.back() != r || p.grid[0] != p.x[0]) {
    node_fail<InvalidModelError>(node, "Grid " + shape_str(p.grid) + " must be [N, out..., " + std::to_string(r) +
                                           "] for X " + shape_str(p.x));
  }
  if (p.mode == GridMode::Cubic && r != 2) {
    node_fail<InvalidModelError>(node, "cubic mode takes 4-D X only, got " + shape_str(p.x));
  }
  return p;
}

void register_grid_sample_ops(OpRegistry& r) {
  OpDef def;
  def.min_opset = kGridSampleOpset;
  def.validate = validate_grid_sample;
  def.infer = infer_grid_sample;
  r.add("GridSample", std::move(def));
}

}  // namespace dnnx
