// MaxRoiPool's attributes (ops/roi/max_roi_pool.cc), read once for inference and the kernels.
#pragma once
#include <cstdint>

#include "ir/graph.h"

namespace dnnx {

struct MaxRoiPoolAttrs {
  int64_t pooled_height = 1, pooled_width = 1;
  float spatial_scale = 1.0f;
};

// Reads and checks the attributes (pooled_shape is required); errors name the node.
MaxRoiPoolAttrs max_roi_pool_attrs(const Node& node);

}  // namespace dnnx
