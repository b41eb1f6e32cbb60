#include "runtime/values/host_value.h"

namespace dnnx {

const char* kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::Tensor: return "tensor";
    case ValueKind::Sequence: return "sequence";
    case ValueKind::Optional: return "optional";
  }
  return "value";
}

HostValue HostValue::sequence(DType elem, std::vector<HostValue> items) {
  HostValue v;
  v.kind = ValueKind::Sequence;
  v.elem = elem;
  v.items = std::move(items);
  return v;
}

HostValue HostValue::optional(DType elem, std::vector<HostValue> items) {
  HostValue v;
  v.kind = ValueKind::Optional;
  v.elem = elem;
  v.items = std::move(items);
  return v;
}

std::string HostValue::str() const {
  switch (kind) {
    case ValueKind::Tensor: return tensor ? tensor->info.str() : std::string("no value");
    case ValueKind::Sequence:
      return "a sequence of " + std::to_string(items.size()) + " " + dtype_name(elem) + " tensors";
    case ValueKind::Optional: return items.empty() ? "an optional holding none" : "an optional holding " + items[0].str();
  }
  return "a value";
}

const ConstTensorPtr& tensor_of(const Node& node, const HostValue& value, const std::string& what) {
  if (!value.is_tensor() || !value.tensor) {
    node_fail<InvalidModelError>(node, what + " must be a tensor, got " + value.str());
  }
  return value.tensor;
}

}  // namespace dnnx
