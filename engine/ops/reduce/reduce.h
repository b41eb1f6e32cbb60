// What a Reduce* op computes and over which axes, shared by the op file and every backend.
#pragma once
#include <string>
#include <vector>

#include "ops/op.h"

namespace dnnx {

// Over the reduced elements of one output cell (an empty set gives the identity: 0, 1, -inf,
// +inf; ReduceMean's is NaN, 0 / 0):
//   Mean  sum / count     Sum  sum     Max / Min  max / min     Prod  product     L2  sqrt(sum x^2)
//   L1  sum |x|    SumSquare  sum x^2    LogSum  log(sum x)    LogSumExp  log(sum e^x), computed as
//   max + log(sum e^(x - max)) (an empty set: log 0 = -inf)
enum class ReduceKind { Mean, Sum, Max, Min, Prod, L2, L1, SumSquare, LogSum, LogSumExp };
ReduceKind reduce_kind(const std::string& op_type);

struct ReduceAxes {
  std::vector<bool> reduced;  // one flag per input dim
  bool keepdims = true;
  Shape out;                  // the output shape (reduced dims 1, or dropped without keepdims)
};

// Axes from the attribute (opset < 18) or the constant optional input (18+); no axes means
// every axis, or none with noop_with_empty_axes (18+).
ReduceAxes reduce_axes(const Node& node, const std::vector<ValueInfo>& inputs, const Shape& x);

// The dims a global pool (GlobalAveragePool, GlobalMaxPool) reduces, as reduce_axes flags them:
// every dim after N and C of X [N, C, spatial...].
inline std::vector<bool> spatial_dims(size_t rank) {
  std::vector<bool> reduced(rank, true);
  for (size_t d = 0; d < rank && d < 2; ++d) reduced[d] = false;
  return reduced;
}

}  // namespace dnnx
