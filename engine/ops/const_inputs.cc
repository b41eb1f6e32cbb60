#include "ops/const_inputs.h"

namespace dnnx {

bool input_present(const std::vector<ValueInfo>& inputs, size_t i) {
  return i < inputs.size() && inputs[i].present;
}

std::vector<int64_t> constant_ints(const Node& node, const std::vector<ValueInfo>& inputs, size_t i,
                                   const char* what) {
  require_input(node, inputs, i, what);
  if (!inputs[i].constant) {
    node_fail<UnsupportedModelError>(node, std::string("input '") + what +
                                               "' must be known when the plan is built: an initializer, a "
                                               "Constant node, a graph input or a value the host computes "
                                               "from those and the input shapes (Note [value inputs]); this "
                                               "one comes from a layer that runs on the device");
  }
  if (is_floating(inputs[i].info.dtype)) {
    node_fail<InvalidModelError>(node, std::string("input '") + what + "' must be int32 or int64, got " +
                                           dtype_name(inputs[i].info.dtype));
  }
  if (numel(inputs[i].info.shape) == 0) return {};  // e.g. empty axes: nothing to read
  return inputs[i].constant->to_int64();
}

std::optional<std::vector<int64_t>> optional_constant_ints(const Node& node,
                                                           const std::vector<ValueInfo>& inputs,
                                                           size_t i, const char* what) {
  if (!input_present(inputs, i)) return std::nullopt;
  return constant_ints(node, inputs, i, what);
}

void require_scalar(const Node& node, const std::vector<ValueInfo>& inputs, size_t i, DType dtype,
                    const char* what) {
  const TensorInfo& t = require_input(node, inputs, i, what);
  if (numel(t.shape) != 1 || t.shape.size() > 1) {
    node_fail<InvalidModelError>(node, std::string("input '") + what + "' must be a scalar, got " +
                                           shape_str(t.shape));
  }
  if (t.dtype != dtype) {
    node_fail<InvalidModelError>(node, std::string("input '") + what + "' is " + dtype_name(t.dtype) +
                                           ", expected " + dtype_name(dtype) + " like the data");
  }
}

}  // namespace dnnx
