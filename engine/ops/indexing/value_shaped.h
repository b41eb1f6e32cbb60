// The ops whose output shape depends on their input values (NonMaxSuppression, Unique): their
// attributes, read once for the OpDef and the host compute (ops/indexing/
// value_shaped_ops.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "ir/graph.h"

namespace dnnx {

// NonMaxSuppression (opsets 10, 11): center_point_box 0 boxes are [y1, x1, y2, x2] (corners in
// either order), 1 boxes are [x_center, y_center, width, height].
struct NmsAttrs {
  bool center_point_box = false;
};
NmsAttrs nms_attrs(const Node& node);  // UnsupportedModelError for a center_point_box not 0 or 1

// Unique (opset 11): sorted 1 (ascending) or 0 (first-occurrence order); axis absent: the
// flattened input; given: slices along it (negative counts from the back, checked against the
// rank by the compute, which knows it).
struct UniqueAttrs {
  bool sorted = true;
  std::optional<int64_t> axis;
};
UniqueAttrs unique_attrs(const Node& node);  // UnsupportedModelError for a sorted not 0 or 1


}  // namespace dnnx
