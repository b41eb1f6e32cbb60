#include "backends/cuda/backend/channels_last_support.h"

#include "ops/channels_last.h"
#include "ops/conv_pool.h"

namespace dnnx::cuda {

namespace {

// auto_pad and pads as cuDNN can take them: explicit and the same at both ends.
std::string window_pads_reason(const Node& node, const std::string& prefix) {
  const std::string auto_pad = node.attr_string(prefix + "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return "auto_pad " + auto_pad + " (pads that depend on the shapes)";
  const std::vector<int64_t> pads = node.attr_ints(prefix + "pads", {});
  const size_t half = pads.size() / 2;
  for (size_t i = 0; i < half; ++i) {
    if (pads[i] != pads[i + half]) return "pads that differ between the two ends";
  }
  return "";
}

std::string max_pool_reason(const Node& node, const std::string& prefix) {
  std::string why = window_pads_reason(node, prefix);
  if (!why.empty()) return why;
  if (node.attr_int(prefix + "ceil_mode", 0) != 0) return "ceil_mode";
  if (node.attr_int(prefix + "storage_order", 0) != 0) return "storage_order";
  for (int64_t d : node.attr_ints(prefix + "dilations", {})) {
    if (d != 1) return "dilations";
  }
  if (node.outputs.size() > 1 && !node.outputs[1].empty()) return "the Indices output";
  return "";
}

}  // namespace

std::string channels_last_unsupported_reason(const Node& node) {
  const std::string base = channels_first_op(node.op_type);
  std::string why;
  if (base == "MaxPool") {
    why = max_pool_reason(node, "");
  } else if (is_conv_pool(base)) {
    why = window_pads_reason(node, "");
    if (why.empty()) why = max_pool_reason(node, kPoolAttrPrefix);
  } else if (base != "GlobalAveragePool") {
    why = window_pads_reason(node, "");  // the Conv family
  }
  return why.empty() ? "" : "no channels-last " + base + " with " + why;
}

}  // namespace dnnx::cuda
