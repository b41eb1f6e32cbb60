// Channels-last forms of the 4-D window ops: "<op>@NHWC" (made by the channels_last pass,
// runtime/passes/channels_last.cc) means <op> with some inputs and its output stored as
// [N, H, W, C] instead of ONNX's [N, C, H, W] (a filter as [K, R, S, C] instead of [K, C, R, S]:
// the same permutation). The value's shape in the graph is the stored one, so the arena, the
// planner and the plan all see what is in memory; the op's meaning is the base op's on the
// permuted-back tensors.
#pragma once
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace dnnx {

constexpr const char* kChannelsLastSuffix = "@NHWC";
// "Transpose+Pad" (Note [padded channels] in runtime/passes/channels_last.cc): a Transpose by
// `perm` [0, 2, 3, 1], then a zero Pad of the last axis by `pads` (ONNX's attribute form, only
// the last axis's end non-zero): X [N, C, H, W] -> [N, H, W, C'].
constexpr const char* kTransposePadOp = "Transpose+Pad";
// "Transpose+SpaceToDepth" (Note [space to depth] in runtime/passes/channels_last.cc): X [N, C, H, W]
// zero-padded by `pads` [top, left, bottom, right] (plus one row or column at the end where the
// padded size is odd), its 2x2 blocks as channels: Y [N, ceil(Hp / 2), ceil(Wp / 2), `channels`]
// with Y[n, i, j, (2 dy + dx) C + c] = Xp[n, c, 2i + dy, 2j + dx], zeros past 4C. With a `to`
// attribute (Cast's: FLOAT16 or BFLOAT16; Note [entry cast]) it reads float32 and writes Y
// rounded to that half type, as a Cast before it would.
constexpr const char* kSpaceToDepthOp = "Transpose+SpaceToDepth";

// Transpose+SpaceToDepth's output dims [N, Hs, Ws, channels] for X [N, C, H, W].
Shape space_to_depth_shape(const Shape& x, const std::vector<int64_t>& pads, int64_t channels);

// The ops that have a channels-last form, and which of their inputs are stored channels-last
// (output 0 always is): nullptr for any other op. Conv family (Conv+Relu, +Add+Relu, +Clip,
// +HardSwish, +Swish): x, w and the residual z; Conv+MaxPool: x and w; MaxPool, AveragePool,
// GlobalAveragePool, BatchNormalization (inference: its [C] statistics as they are): x; Int8Conv:
// x, w (input 3) and the residual z (input 12).
const std::vector<size_t>* channels_last_inputs(const std::string& base_op);

// "Conv+Relu@NHWC" -> "Conv+Relu"; any other name is returned as it is.
std::string channels_first_op(const std::string& op_type);
bool is_channels_last_op(const std::string& op_type);

// [N, C, H, W] -> [N, H, W, C] (rank 4 only) and back.
Shape to_channels_last(const Shape& nchw);
Shape to_channels_first(const Shape& nhwc);
// The transpose perms that do the same to a tensor's data.
inline std::vector<int64_t> channels_last_perm() { return {0, 2, 3, 1}; }
inline std::vector<int64_t> channels_first_perm() { return {0, 3, 1, 2}; }

}  // namespace dnnx
