#include "runtime/control/dynamic_node.h"

#include "ops/op.h"
#include "runtime/values/value_ops.h"

namespace dnnx {

namespace {

// The inputs as tensors (null where omitted), refusing a sequence or optional by name.
std::vector<ConstTensorPtr> tensors_of(const Node& node, const std::vector<HostValue>& inputs) {
  std::vector<ConstTensorPtr> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].is_tensor()) {
      node_fail<InvalidModelError>(node, "input '" + node.inputs[i] + "' is " + inputs[i].str() + "; " + node.op_type +
                                             " takes tensors there");
    }
    out.push_back(inputs[i].tensor);
  }
  return out;
}

}  // namespace

std::vector<HostValue> run_dynamic_node(Engine& owner, const Node& node, const std::vector<HostValue>& inputs) {
  if (is_value_op(node)) return run_value_op(owner, node, inputs);  // Note [sequences]
  if (node.op_type == "If") return run_if(owner, node, inputs);
  if (node.op_type == "Loop") return run_loop(owner, node, inputs);
  // Identity of a sequence or optional: the value itself (the plan stopped because it reads one).
  if (node.op_type == "Identity" && node.domain.empty() && !inputs.empty() && !inputs[0].is_tensor()) return {inputs[0]};
  const std::vector<ConstTensorPtr> tensors = tensors_of(node, inputs);
  std::vector<ConstTensorPtr> outs;
  if (node.op_type == "Scan") {
    outs = run_scan(owner, node, tensors);
  } else {
    const OpDef* def = op_registry().find(node);
    if (!def || !def->evaluate) node_fail<InvalidModelError>(node, "the engine has no host evaluation of this op");
    outs = def->evaluate(node, tensors);
  }
  return std::vector<HostValue>(outs.begin(), outs.end());
}

}  // namespace dnnx
