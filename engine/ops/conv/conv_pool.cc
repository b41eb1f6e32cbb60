#include "ops/conv/conv_pool.h"

#include "ops/op.h"

namespace dnnx {

namespace {

const std::string kPrefix = kPoolAttrPrefix;

}  // namespace

bool is_conv_pool(const std::string& op_type) {
  return op_type == std::string("Conv") + kConvPoolSuffix || op_type == std::string("Conv+Relu") + kConvPoolSuffix;
}

ConvPoolParts split_conv_pool(const Node& fused) {
  ConvPoolParts parts;
  parts.conv.name = fused.name;
  parts.conv.op_type = fused.op_type.substr(0, fused.op_type.size() - std::string(kConvPoolSuffix).size());
  parts.conv.inputs = fused.inputs;
  parts.conv.outputs = {kConvPoolInner};
  parts.conv.opset = fused.opset;
  parts.pool.name = fused.name;
  parts.pool.op_type = "MaxPool";
  parts.pool.inputs = {kConvPoolInner};
  parts.pool.outputs = fused.outputs;
  parts.pool.opset = fused.opset;
  for (const auto& kv : fused.attrs) {
    if (kv.first.compare(0, kPrefix.size(), kPrefix) == 0) {
      parts.pool.attrs[kv.first.substr(kPrefix.size())] = kv.second;
    } else {
      parts.conv.attrs[kv.first] = kv.second;
    }
  }
  return parts;
}

Node join_conv_pool(const Node& conv, const Node& pool) {
  Node fused = conv;
  fused.op_type = conv.op_type + kConvPoolSuffix;
  fused.outputs = pool.outputs;
  for (const auto& kv : pool.attrs) fused.attrs[kPrefix + kv.first] = kv.second;
  return fused;
}

// The two definitions in sequence: each half validated and inferred as itself.
void register_conv_pool_ops(OpRegistry& r) {
  const OpDef* max_pool = r.find("MaxPool");
  for (const std::string conv_op : {"Conv", "Conv+Relu"}) {
    const OpDef* conv = r.find(conv_op);
    OpDef def;
    def.fused = true;
    def.validate = [conv, max_pool](const Node& node) {
      const ConvPoolParts parts = split_conv_pool(node);
      conv->validate(parts.conv);
      max_pool->validate(parts.pool);
    };
    def.infer = [conv, max_pool](const Node& node, const std::vector<ValueInfo>& inputs) {
      const ConvPoolParts parts = split_conv_pool(node);
      ValueInfo inner;
      inner.info = conv->infer(parts.conv, inputs)[0];
      return max_pool->infer(parts.pool, {inner});
    };
    r.add(conv_op + kConvPoolSuffix, std::move(def));
  }
}

}  // namespace dnnx
