// Pad's amounts and mode, read once for the op file and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

// Per dim of X: elements added before and after (negative: removed).
struct PadAmounts {
  Shape begin;
  Shape end;
};

// From the `pads` attribute (opset < 11) or the constant `pads` input with optional `axes`
// (opset 11+, axes from 18); InvalidModelError naming the node for a wrong length or an axis
// out of range.
PadAmounts pad_amounts(const Node& node, const std::vector<ValueInfo>& inputs, size_t rank);

// The `mode` attribute (validated at load: 'wrap' from opset 19).
//   constant  the new cells hold the constant
//   edge      they repeat the nearest edge element:          [a b c] -> a a [a b c] c c
//   reflect   they mirror X about its edge, without repeating it: [a b c] -> c b [a b c] b a
//   wrap      they continue X periodically:                    [a b c] -> b c [a b c] a b
// Negative amounts crop X first and the other modes then pad the cropped X (as onnxruntime does;
// onnx's reference takes no negative amounts); amounts past X's size repeat the pattern, as
// numpy.pad (onnx's reference) does: reflect's period is 2 (n - 1) (onnxruntime refuses these).
enum class PadMode { Constant, Edge, Reflect, Wrap };
PadMode pad_mode(const Node& node);

// The index along one dim that output index `o` reads, for a dim of `in` elements padded by
// `begin` / `end`; -1 for a cell of the constant (constant mode only). The dim's cropped X must
// not be empty where a non-constant mode pads it (checked at load).
int64_t pad_source_index(PadMode mode, int64_t o, int64_t in, int64_t begin, int64_t end);

}  // namespace dnnx
