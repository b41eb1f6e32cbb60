#include "runtime/control/dynamic_node.h"

#include "ops/op.h"

namespace dnnx {

std::vector<ConstTensorPtr> run_dynamic_node(Engine& owner, const Node& node, const std::vector<ConstTensorPtr>& inputs) {
  if (node.op_type == "If") return run_if(owner, node, inputs);
  if (node.op_type == "Loop") return run_loop(owner, node, inputs);
  if (node.op_type == "Scan") return run_scan(owner, node, inputs);
  const OpDef* def = op_registry().find(node);
  if (!def || !def->evaluate) node_fail<InvalidModelError>(node, "the engine has no host evaluation of this op");
  return def->evaluate(node, inputs);
}

}  // namespace dnnx
