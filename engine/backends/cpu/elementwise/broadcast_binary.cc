// The plan half of broadcast_binary.h: merging the broadcast dims and picking the loop.
#include "backends/cpu/elementwise/broadcast_binary.h"

namespace dnnx {

namespace {

// The broadcast of A and B to `out` with size-1 dims dropped and like neighbours merged.
std::vector<MergedDim> merge_dims(const Shape& a, const Shape& b, const Shape& out) {
  const size_t rank = out.size();
  std::vector<MergedDim> dims;  // strides hold 1 (full) or 0 (broadcast) until the pass below
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    const int64_t da = d < rank - a.size() ? 1 : a[d - (rank - a.size())];
    const int64_t db = d < rank - b.size() ? 1 : b[d - (rank - b.size())];
    const MergedDim dim{out[d], da == out[d] ? 1 : 0, db == out[d] ? 1 : 0};
    if (!dims.empty() && dims.back().stride_a == dim.stride_a && dims.back().stride_b == dim.stride_b) {
      dims.back().size *= dim.size;
    } else {
      dims.push_back(dim);
    }
  }
  int64_t step_a = 1, step_b = 1;  // contiguous strides, innermost first
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    if (it->stride_a) {
      it->stride_a = step_a;
      step_a *= it->size;
    }
    if (it->stride_b) {
      it->stride_b = step_b;
      step_b *= it->size;
    }
  }
  return dims;
}

// Vector fits when one side is full along every merged dim and the other along at most one.
bool plan_vector(const std::vector<MergedDim>& dims, BinaryPlan& plan) {
  for (const bool small_is_a : {false, true}) {
    int small_dims = 0;
    bool big_full = true;
    size_t at = 0;
    for (size_t i = 0; i < dims.size(); ++i) {
      big_full = big_full && (small_is_a ? dims[i].stride_b : dims[i].stride_a) != 0;
      if ((small_is_a ? dims[i].stride_a : dims[i].stride_b) != 0) {
        ++small_dims;
        at = i;
      }
    }
    if (!big_full || small_dims > 1) continue;
    plan.path = BinaryPath::Vector;
    plan.small_is_a = small_is_a;
    plan.inner = plan.n;
    if (small_dims == 1) {
      plan.outer = 1;
      for (size_t i = 0; i < at; ++i) plan.outer *= dims[i].size;
      plan.mid = dims[at].size;
      plan.inner = plan.n / (plan.outer * plan.mid);
    }
    return true;
  }
  return false;
}

}  // namespace

BinaryPlan plan_binary(const Shape& a, const Shape& b, const Shape& out) {
  BinaryPlan plan;
  plan.n = numel(out);
  if (plan.n == 0) return plan;
  std::vector<MergedDim> dims = merge_dims(a, b, out);
  if (dims.empty() || (dims.size() == 1 && dims[0].stride_a && dims[0].stride_b)) return plan;
  if (plan_vector(dims, plan)) return plan;
  plan.path = BinaryPath::Strided;
  plan.dims = std::move(dims);
  return plan;
}

const char* path_name(const BinaryPlan& plan) {
  switch (plan.path) {
    case BinaryPath::Elementwise: return "elementwise";
    case BinaryPath::Vector: return plan.mid == 1 ? "broadcast scalar" : "broadcast vector";
    case BinaryPath::Strided: return "broadcast strided";
  }
  return "?";
}

}  // namespace dnnx
