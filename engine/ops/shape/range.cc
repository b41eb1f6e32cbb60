// Range (opset 11+): start, limit, delta, scalars of one type (float32, float64, int16, int32,
// int64, as onnxruntime's; float16 and bfloat16 too) ->
// [n] of that type, y[i] = start + i * delta, n = max(ceil((limit - start) / delta), 0).
// The output's shape depends on the inputs' values (value_inputs): the planner must know them,
// as constants, values folded at plan time (Note [plan-time folding]) or values it keys a plan by.
#include "ops/shape/range.h"

#include <cmath>

#include "ops/elementwise/elementwise.h"

namespace dnnx {

namespace {

// In int64 (int32 inputs cannot overflow it): the ceil of a quotient of one sign, exactly.
int64_t int_range_length(int64_t start, int64_t limit, int64_t step) {
  const int64_t diff = limit - start;
  if ((diff > 0) != (step > 0) || diff == 0) return 0;
  const int64_t mag = diff < 0 ? -diff : diff, step_mag = step < 0 ? -step : step;
  return (mag + step_mag - 1) / step_mag;
}

const char* const kNames[] = {"start", "limit", "delta"};

std::vector<TensorInfo> infer_range(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& start = require_input(node, inputs, 0, "start");
  for (size_t i = 0; i < 3; ++i) {
    const TensorInfo& t = require_input(node, inputs, i, kNames[i]);
    if (numel(t.shape) != 1 || t.shape.size() > 1) {
      node_fail<InvalidModelError>(node, std::string(kNames[i]) + " must be a scalar, got " + shape_str(t.shape));
    }
    if (t.dtype != start.dtype) {
      node_fail<InvalidModelError>(node, std::string(kNames[i]) + " is " + dtype_name(t.dtype) + " but start is " +
                                             dtype_name(start.dtype));
    }
  }
  require_element_type(node, start, ElementTypes::Numbers, "start, limit and delta");
  for (size_t i = 0; i < 3; ++i) {
    if (!inputs[i].constant) {
      node_fail<UnsupportedModelError>(node, std::string("the output length depends on the value of ") + kNames[i] +
                                                 ", which is not known when the model is planned (a constant or a "
                                                 "value computed from shapes is)");
    }
  }
  const int64_t n = range_length(node, *inputs[0].constant, *inputs[1].constant, *inputs[2].constant);
  return {TensorInfo{{n}, start.dtype}};
}

}  // namespace

int64_t range_length(const Node& node, const ConstTensor& start, const ConstTensor& limit, const ConstTensor& delta) {
  switch (start.info.dtype) {
    case DType::Float32: {
      const float s = *start.as<float>(), l = *limit.as<float>(), d = *delta.as<float>();
      if (d == 0.0f) node_fail<InvalidModelError>(node, "delta must not be 0");
      const double n = std::ceil(static_cast<double>(l - s) / static_cast<double>(d));
      if (!(n > 0)) return 0;  // NaN included
      if (n > 1e15) node_fail<InvalidModelError>(node, "the range has too many elements");
      return static_cast<int64_t>(n);
    }
    case DType::Float16:
    case DType::BFloat16:  // the CPU computes it in float32 (Note [cpu dtypes]), as the length here
    case DType::Float64: {
      auto value = [](const ConstTensor& t) {
        return t.info.dtype == DType::Float64 ? *t.as<double>()
                                              : static_cast<double>(storage_to_float(*t.as<uint16_t>(), t.info.dtype));
      };
      const double s = value(start), l = value(limit), d = value(delta);
      if (d == 0.0) node_fail<InvalidModelError>(node, "delta must not be 0");
      const double n = std::ceil((l - s) / d);
      if (!(n > 0)) return 0;  // NaN included
      if (n > 1e15) node_fail<InvalidModelError>(node, "the range has too many elements");
      return static_cast<int64_t>(n);
    }
    case DType::Int16:
    case DType::Int32:
    case DType::Int64: {
      const int64_t s = start.to_int64()[0], l = limit.to_int64()[0], d = delta.to_int64()[0];
      if (d == 0) node_fail<InvalidModelError>(node, "delta must not be 0");
      return int_range_length(s, l, d);
    }
    default:
      node_fail<UnsupportedModelError>(node, std::string("Range on ") + dtype_name(start.info.dtype) +
                                                 " is not supported (the float types, int16, int32, int64 are)");
  }
}

void register_range_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = infer_range;
  def.value_inputs = {0, 1, 2};
  def.min_opset = 11;
  r.add("Range", std::move(def));
}

}  // namespace dnnx
