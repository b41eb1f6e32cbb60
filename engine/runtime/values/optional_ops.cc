// Optional (opset 15), OptionalHasElement and OptionalGetElement (15; 18 also takes a plain
// tensor or sequence, or no input), as onnxruntime runs them. An optional holds none or one
// value (a tensor or a sequence: Note [sequences]).
#include "runtime/control/slices.h"
#include "runtime/values/value_ops.h"

namespace dnnx {

namespace {

bool given(const std::vector<HostValue>& inputs, size_t i) { return i < inputs.size() && inputs[i].present(); }

// The element type an Optional of no input declares: its `type` attribute, which the importer
// writes as onnx's type string ("tensor(float32)", "sequence(tensor(int64))").
DType declared_elem(const Node& node) {
  std::string text = node.attr_string("type", "");
  const size_t open = text.rfind('(');
  const size_t close = text.find(')');
  DType elem = DType::Float32;
  if (open == std::string::npos || close == std::string::npos || close < open ||
      !dtype_from_name(text.substr(open + 1, close - open - 1), elem)) {
    node_fail<InvalidModelError>(node, "without an input it needs its 'type' attribute (a tensor or sequence type), got '" +
                                           text + "'");
  }
  return elem;
}

DType elem_of(const HostValue& v) { return v.is_tensor() ? v.tensor->info.dtype : v.elem; }

}  // namespace

std::vector<HostValue> run_optional_op(const Node& node, const std::vector<HostValue>& inputs) {
  if (node.op_type == "Optional") {
    if (!given(inputs, 0)) return {HostValue::optional(declared_elem(node), {})};
    if (inputs[0].kind == ValueKind::Optional) node_fail<InvalidModelError>(node, "input must be a tensor or a sequence, got " + inputs[0].str());
    return {HostValue::optional(elem_of(inputs[0]), {inputs[0]})};
  }
  if (node.op_type == "OptionalHasElement") {
    const bool has = given(inputs, 0) && (inputs[0].kind != ValueKind::Optional || !inputs[0].items.empty());
    return {HostValue(scalar_bool(has))};
  }
  if (node.op_type == "OptionalGetElement") {
    if (!given(inputs, 0)) node_fail<InvalidModelError>(node, "needs an input");
    if (inputs[0].kind != ValueKind::Optional) return {inputs[0]};
    if (inputs[0].items.empty()) {
      node_fail<InvalidModelError>(node, "input '" + node.inputs[0] + "' is an optional holding none: there is no element to get");
    }
    return {inputs[0].items[0]};
  }
  node_fail<InvalidModelError>(node, "is not an optional op");
}

}  // namespace dnnx
