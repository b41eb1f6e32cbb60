// What the elementwise ops share (binary.cc, compare.cc, logical.cc, where.cc, activation.cc):
// the element types an op takes, checked with a message naming the node and the type, and the
// broadcast of its inputs. One definition, read by every backend's kernels through the OpDefs.
#pragma once
#include <vector>

#include "ops/op.h"

namespace dnnx {

// The element types of an elementwise op's inputs.
enum class ElementTypes {
  Numbers,         // the float and integer types (a backend's kernels may take fewer: Note [cpu dtypes])
  NumbersAndBool,  // the above and bool (Max/Min at opset 20)
  AnyButStorage,   // the above and string (Equal, Where: Note [string tensors] in ir/tensor.h)
  Bool,            // bool only (Not, And, Or, Xor)
  Integers,        // the integer types, is_integer (BitShift, BitwiseAnd, ...)
};

// "float32, int32 or int64", ...: for messages.
const char* element_types_name(ElementTypes types);
bool element_type_allowed(ElementTypes types, DType t);

// Refuses `t` (UnsupportedModelError naming the node and `what`) unless `types` allows it.
void require_element_type(const Node& node, const TensorInfo& t, ElementTypes types, const char* what);

// Inputs A and B, of one type that `types` allows, broadcast numpy-style:
// A [..] op B [..] -> [broadcast(A, B)] of A's type (the caller sets the output type).
TensorInfo infer_broadcast_pair(const Node& node, const std::vector<ValueInfo>& inputs, ElementTypes types);

}  // namespace dnnx
