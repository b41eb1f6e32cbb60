// The sliding-window geometry of Conv and MaxPool, written once and shared by the op files and
// every backend: kernel, strides, dilations, pads (explicit or from auto_pad), group, ceil_mode
// and the output spatial size. Spatial vectors hold one entry per spatial dim (D, H, W order).
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace dnnx {

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

// A half-open range of indices [lo, hi); empty when lo == hi.
struct IndexRange {
  int64_t lo = 0;
  int64_t hi = 0;
};

// Which op reads the geometry: they accept different attributes (group / ceil_mode).
enum class WindowOp { Conv, Pool };

struct ConvGeometry {
  AutoPad auto_pad = AutoPad::NotSet;
  bool ceil_mode = false;  // pooling only: round the output size up
  int64_t group = 1;       // Conv only
  Shape kernel;            // window size, before dilation
  Shape strides;
  Shape dilations;
  Shape pads_begin;
  Shape pads_end;
  Shape input;   // spatial dims of X
  Shape output;  // spatial dims of Y

  size_t rank() const { return kernel.size(); }
  // The span one window covers: (k - 1) * d + 1.
  int64_t effective_kernel(size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }
  int64_t kernel_size() const { return numel(kernel); }
  int64_t input_size() const { return numel(input); }
  int64_t output_size() const { return numel(output); }
  bool has_padding() const;
  // Along `dim`, output index o's window starts at input index window_start(dim, o) and its tap
  // k reads input index window_start(dim, o) + k * dilations[dim] (outside [0, in): padding).
  int64_t window_start(size_t dim, int64_t out) const { return out * strides[dim] - pads_begin[dim]; }
  // The taps of output index `out`'s window along `dim` that read inside the input.
  IndexRange taps_inside(size_t dim, int64_t out) const;
  // The output indices along `dim` whose tap `tap` reads inside the input (im2col's copy range).
  IndexRange outputs_inside(size_t dim, int64_t tap) const;
  // A 1x1 (x1) window with stride 1 and no padding: Conv is then a plain GEMM over X.
  bool is_pointwise() const;
  // Prepends unit dims (kernel 1, stride 1, no pad) up to `spatial_rank`, so that one 3-D
  // kernel serves 1-D and 2-D windows too (and cuDNN, which wants at least 2 spatial dims).
  ConvGeometry expanded_to(size_t spatial_rank) const;
  // "5x5", the kernel as people write it (for plans and messages).
  std::string kernel_str() const;
};

// Load-time check of the attributes alone (no shapes yet): kinds, matching lengths, positive
// strides and dilations, non-negative pads, a known auto_pad, not both auto_pad and pads.
// Throws InvalidModelError naming the node.
void check_window_attrs(const Node& node, WindowOp op);
// The window ops take 1 to 3 spatial dims.
constexpr size_t kMinSpatialRank = 1;
constexpr size_t kMaxSpatialRank = 3;

// Conv's and ConvTranspose's X [N, C, spatial...] and W of X's rank: float, 1 to 3 spatial dims.
void check_conv_operands(const Node& node, const TensorInfo& x, const TensorInfo& w);

// The full geometry for one input. `input` holds X's spatial dims; `kernel` the window's (W's
// spatial dims for Conv, kernel_shape for MaxPool). A kernel_shape attribute that disagrees
// with `kernel`, attributes of the wrong length for the input's rank, or a window larger than
// the padded input throw InvalidModelError with the shapes in the message.
ConvGeometry make_conv_geometry(const Node& node, WindowOp op, const Shape& input,
                                const Shape& kernel);

}  // namespace dnnx
