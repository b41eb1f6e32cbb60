// Note [entry cast]: a half model's float32 input reaches its first layer through a Cast to half
// (half_storage.cc). Where that first layer is the stem's Transpose+SpaceToDepth (Note [space to
// depth]), the Cast is folded into it: the layout kernel reads the float32 input and writes the
// half blocks, one pass over memory instead of two (ResNet-50 at batch 256: the Cast alone took
// 0.10 ms of 6.5). Only a Cast whose output the layout op alone reads, and that is no graph
// output (fuse_with_sole_consumer); the folded op carries Cast's `to` (ops/layout/channels_last.h), so
// its output keeps the half type and nothing after it changes. Rounding is the Cast's (to
// nearest even), so the result is bit-identical to the two-step form.
#include "ops/layout/cast.h"
#include "ops/layout/channels_last.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/rewrite.h"

namespace dnnx {

int fold_entry_cast(Graph& graph, const PassOptions& options) {
  const std::map<std::string, TensorInfo> types = value_types(graph);
  auto is_half_cast = [&types](const Node& node) {
    if (node.op_type != "Cast" || node.inputs.size() != 1 || !is_half(cast_target(node))) return false;
    auto in = types.find(node.inputs[0]);
    return in != types.end() && in->second.dtype == DType::Float32;
  };
  return fuse_with_sole_consumer(graph, options, is_half_cast, [](const Node& cast, const Node& consumer) -> std::optional<Node> {
    if (consumer.op_type != kSpaceToDepthOp || consumer.has_attr("to")) return std::nullopt;
    Node folded = consumer;
    folded.inputs[0] = cast.inputs[0];
    folded.attrs["to"] = cast.attrs.at("to");
    return folded;
  });
}

}  // namespace dnnx
