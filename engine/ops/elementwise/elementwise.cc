#include "ops/elementwise/elementwise.h"

namespace dnnx {

const char* element_types_name(ElementTypes types) {
  switch (types) {
    case ElementTypes::Numbers: return "a float or integer type";
    case ElementTypes::NumbersAndBool: return "a float or integer type, or bool";
    case ElementTypes::AnyButStorage: return "a float or integer type, bool or string";
    case ElementTypes::Bool: return "bool";
    case ElementTypes::Integers: return "int32 or int64";
  }
  return "?";
}

bool element_type_allowed(ElementTypes types, DType t) {
  switch (types) {
    case ElementTypes::Numbers: return is_floating(t) || is_integer(t);
    case ElementTypes::NumbersAndBool: return is_floating(t) || is_integer(t) || t == DType::Bool;
    case ElementTypes::AnyButStorage: return is_floating(t) || is_integer(t) || t == DType::Bool || t == DType::String;
    case ElementTypes::Bool: return t == DType::Bool;
    case ElementTypes::Integers: return is_integer(t);
  }
  return false;
}

void require_element_type(const Node& node, const TensorInfo& t, ElementTypes types, const char* what) {
  if (!element_type_allowed(types, t.dtype)) {
    node_fail<UnsupportedModelError>(node, std::string(what) + " must be " + element_types_name(types) + ", got " +
                                               dtype_name(t.dtype));
  }
}

TensorInfo infer_broadcast_pair(const Node& node, const std::vector<ValueInfo>& inputs, ElementTypes types) {
  const TensorInfo& a = require_input(node, inputs, 0, "A");
  const TensorInfo& b = require_input(node, inputs, 1, "B");
  if (a.dtype != b.dtype) {
    node_fail<InvalidModelError>(node, std::string("A is ") + dtype_name(a.dtype) + " but B is " + dtype_name(b.dtype));
  }
  require_element_type(node, a, types, "A and B");
  return TensorInfo{broadcast_shapes(node, a.shape, b.shape), a.dtype};
}

}  // namespace dnnx
