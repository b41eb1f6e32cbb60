// Note [value-shaped compute]: an op whose output shape depends on its input values
// (NonMaxSuppression, Unique) is computed on the host by a pure function of the node (for its
// attributes) and its inputs' data; the function decides its outputs' shapes. A staged plan
// (issue #36) calls it once the inputs are known and plans what follows per output shape.
// Errors name the node: InputError for values the op refuses (an iou_threshold outside [0, 1]),
// InvalidModelError for shapes that do not agree, UnsupportedModelError for a type it lacks.
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace dnnx {

// inputs[i]: the node's input i, or null where the node omits it (or past the end of the list).
// Returns one tensor per output the op defines (Unique: all four), whether the node names it or not.
using ValueShapedInputs = std::vector<const ConstTensor*>;
using ValueShapedCompute = std::vector<ConstTensor> (*)(const Node& node, const ValueShapedInputs& inputs);

// NonMaxSuppression (opsets 10, 11), onnxruntime's CPU kernel: boxes [B, N, 4] float32, scores
// [B, C, N] float32, max_output_boxes_per_class int64 (absent or <= 0: none selected),
// iou_threshold float32 in [0, 1] (absent: 0), score_threshold float32 (absent: no filter; kept
// where score > it) -> selected_indices [num_selected, 3] int64 (batch, class, box), batch by
// batch, class by class, each class's boxes by descending score (ties: the lower box index first).
std::vector<ConstTensor> non_max_suppression(const Node& node, const ValueShapedInputs& inputs);

// Unique (opset 11), onnxruntime's CPU kernel: X of any numeric type or bool -> Y (X's type:
// [num_unique] flattened, or X's shape with num_unique on axis), indices [num_unique] (first
// occurrence), inverse_indices [X's count, or its size on axis], counts [num_unique], all int64.
// Equality is the `<` ordering's (so -0.0 and 0.0 are one value, kept as the first seen);
// float16 and bfloat16 compare as float32.
std::vector<ConstTensor> unique(const Node& node, const ValueShapedInputs& inputs);

// The compute of a value-shaped op type, or null for any other op.
ValueShapedCompute find_value_shaped_compute(const std::string& op_type);

}  // namespace dnnx
