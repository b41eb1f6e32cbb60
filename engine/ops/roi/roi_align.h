// RoiAlign's attributes (ops/roi/roi_align.cc), read once for the op's inference and every
// backend's kernel.
#pragma once
#include <cstdint>

#include "ir/graph.h"

namespace dnnx {

enum class RoiAlignMode { Avg, Max };

struct RoiAlignAttrs {
  RoiAlignMode mode = RoiAlignMode::Avg;
  // half_pixel (opset 16's default) shifts the scaled box by -0.5 and keeps its size as it is;
  // output_half_pixel (opset 10's only meaning) does not shift, and widens a box to at least
  // 1x1 (Note [roi align]).
  bool half_pixel = false;
  int64_t output_height = 1, output_width = 1;
  int64_t sampling_ratio = 0;  // samples per bin and axis; 0: ceil(box size / output size)
  float spatial_scale = 1.0f;
};

// Reads and checks the attributes; UnsupportedModelError naming the node and the value.
RoiAlignAttrs roi_align_attrs(const Node& node);

}  // namespace dnnx
