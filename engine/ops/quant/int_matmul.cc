#include "ops/quant/int_matmul.h"

namespace dnnx {

namespace {

bool one_value(const Shape& s) { return s.empty() || (s.size() == 1 && s[0] == 1); }

}  // namespace

void require_one_value(const Node& node, const Shape& param, const char* what) {
  if (!one_value(param)) {
    node_fail<InvalidModelError>(node, std::string(what) + " must be a scalar or a 1-element 1-D tensor, got " +
                                           shape_str(param));
  }
}

void require_int8_type(const Node& node, const TensorInfo& info, const char* what) {
  if (!is_int8_type(info.dtype)) {
    node_fail<UnsupportedModelError>(node, std::string(what) + " is " + dtype_name(info.dtype) +
                                               ", expected int8 or uint8");
  }
}

ParamSpread a_param_spread(const Node& node, const MatMulGeometry& g, const Shape& param, const char* what,
                           bool per_row_allowed) {
  if (one_value(param)) return ParamSpread::PerTensor;
  if (per_row_allowed && param.size() == 1 && param[0] == g.m) return ParamSpread::PerRow;
  node_fail<InvalidModelError>(node, std::string(what) + " must be a scalar" +
                                         (per_row_allowed ? " or [M] = [" + std::to_string(g.m) + "]" : std::string()) +
                                         ", got " + shape_str(param));
}

ParamSpread b_param_spread(const Node& node, const MatMulGeometry& g, const Shape& b, const Shape& param,
                           const char* what) {
  if (one_value(param)) return ParamSpread::PerTensor;
  if (param.size() == 1 && param[0] == g.n) return ParamSpread::PerColumn;
  if (param.size() == b.size() && b.size() >= 2 && param[param.size() - 2] == 1 && param.back() == g.n &&
      std::equal(param.begin(), param.end() - 2, b.begin())) {
    return b.size() == 2 ? ParamSpread::PerColumn : ParamSpread::PerBatchColumn;
  }
  node_fail<InvalidModelError>(node, std::string(what) + " must be a scalar, [N] = [" + std::to_string(g.n) +
                                         "] or B's batch dims then [1, N] (B " + shape_str(b) + "), got " +
                                         shape_str(param));
}

}  // namespace dnnx
