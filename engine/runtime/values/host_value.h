// Values that are not tensors: ONNX's sequences and optionals (Note [sequences]).
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace dnnx {

// Note [sequences]: an ONNX value is a tensor, a sequence of tensors or an optional (of a tensor
// or a sequence). A sequence's length and its elements' shapes are known only once it is made, at
// run time, and nothing about them fits a plan's arena (one block per value, sized at plan time).
// So sequences and optionals are host values that the engine holds between plan stages, the way
// it holds the values around If, Loop and Scan (Note [staged plans] in runtime/stages.h):
//
//   - every op that makes or reads one (the Sequence* ops, SplitToSequence, ConcatFromSequence,
//     SequenceMap, Optional*) is `value_shaped` in its OpDef (ops/sequence/), so a plan stops
//     before it and the engine runs it on the host (runtime/values/value_ops.h), with
//     onnxruntime's semantics; SequenceMap's body is planned and run like any body
//     (Engine::body), once per element;
//   - any other node that reads a non-tensor value (Identity of a sequence, a Loop or If
//     carrying one) also ends the plan: the planner sees the value's kind (PlannedValue::kind)
//     and stops there; Identity passes the value on, If and Loop carry it through their bodies,
//     and any other op is refused naming the node and the value;
//   - the values between stages are HostValues: a tensor (a ConstTensor, as before), a sequence
//     (its element type and elements) or an optional (none, or one value). A stage or body whose
//     input is a sequence or optional is typed by it (PlanKey::kinds): its plan holds a 0-byte
//     placeholder for that input, which no kernel reads.
//
// On a device backend the sequence ops run on the host too: the tensors they read are copied back
// as NonZero's input is (Note [device-resident stages] in runtime/stage_value.h), and what they
// make is uploaded by the next stage.
// Model.run takes a Python list for a sequence input and None or a value for an optional one, and
// returns the same (python/bindings/bind_values.cc).
enum class ValueKind { Tensor, Sequence, Optional };

const char* kind_name(ValueKind kind);  // "tensor", "sequence", "optional"

struct HostValue {
  ValueKind kind = ValueKind::Tensor;
  ConstTensorPtr tensor;          // Tensor: the tensor (null: an omitted input or output)
  std::vector<HostValue> items;   // Sequence: its elements; Optional: none, or its one value
  // Sequence: its elements' type (an empty sequence keeps it); Optional: its value's, for messages.
  DType elem = DType::Float32;

  HostValue() = default;
  HostValue(ConstTensorPtr t) : tensor(std::move(t)) {}  // NOLINT: a tensor is a value
  static HostValue sequence(DType elem, std::vector<HostValue> items);
  static HostValue optional(DType elem, std::vector<HostValue> items);  // none (empty) or one value

  bool is_tensor() const { return kind == ValueKind::Tensor; }
  bool present() const { return kind != ValueKind::Tensor || tensor != nullptr; }
  // "[2,3] float32", "a sequence of 3 float32 tensors", "an optional holding none".
  std::string str() const;
};

// The tensor of a tensor value; an InvalidModelError naming the node and `what` otherwise.
const ConstTensorPtr& tensor_of(const Node& node, const HostValue& value, const std::string& what);

}  // namespace dnnx
