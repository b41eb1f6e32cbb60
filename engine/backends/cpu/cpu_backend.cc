#include "backends/cpu/cpu_backend.h"

namespace dnnx {

CpuBackend::CpuBackend() { register_cpu_kernels(kernels_); }

std::string CpuBackend::unsupported_reason(const Node& node) const {
  const OpDef* def = op_registry().find(node.op_type);
  if (def && def->aliases_input0) return "";  // a view: no kernel needed
  const KernelEntry* entry = kernels_.entry(node.op_type);
  return entry ? entry->refusal(node) : "the CPU backend has no kernel for " + node.op_type;
}

KernelChoice CpuBackend::plan_node(const Node& node, const std::vector<ValueInfo>& inputs,
                                   const std::vector<TensorInfo>& outputs) const {
  const KernelFactory* factory = kernels_.find(node.op_type);
  if (!factory) node_fail<UnsupportedModelError>(node, unsupported_reason(node));
  return (*factory)(node, inputs, outputs);
}

}  // namespace dnnx
