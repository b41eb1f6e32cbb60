// Reading an input broadcast (numpy-style) to a larger output, as runs of contiguous output
// elements: shared by the variadic Sum/Max/Min kernels and Expand. Output dims of size 1 are
// dropped and neighbouring dims that broadcast the same way merged at plan time, so a bias
// [C,1,1] over [N,C,H,W] walks as N*C runs of H*W elements reading one value each.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/tensor.h"

namespace dnnx {

struct BroadcastWalk {
  std::vector<int64_t> sizes;    // merged output dims, outermost first
  std::vector<int64_t> strides;  // the input's element stride along each (0: broadcast)
  int64_t total = 0;             // output elements
};

// `in` must broadcast to `out` (the op's shape inference has checked it).
inline BroadcastWalk broadcast_walk(const Shape& in, const Shape& out) {
  BroadcastWalk w;
  w.total = numel(out);
  std::vector<bool> full;  // per merged dim: the input varies along it
  const size_t rank = out.size();
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    const int64_t in_dim = d < rank - in.size() ? 1 : in[d - (rank - in.size())];
    const bool varies = in_dim == out[d];
    if (!full.empty() && full.back() == varies) {
      w.sizes.back() *= out[d];
    } else {
      w.sizes.push_back(out[d]);
      full.push_back(varies);
    }
  }
  w.strides.assign(w.sizes.size(), 0);
  int64_t step = 1;
  for (size_t i = w.sizes.size(); i-- > 0;) {
    if (!full[i]) continue;
    w.strides[i] = step;
    step *= w.sizes[i];
  }
  return w;
}

// Calls fn(out_offset, in_offset, count, in_step) for every run, where output elements
// [out_offset, out_offset + count) read input elements in_offset + k * in_step (in_step 0 or 1).
template <class Fn>
void for_each_run(const BroadcastWalk& w, Fn&& fn) {
  if (w.total == 0) return;
  if (w.sizes.empty()) {  // a single element
    fn(int64_t{0}, int64_t{0}, int64_t{1}, int64_t{0});
    return;
  }
  const size_t last = w.sizes.size() - 1;
  const int64_t inner = w.sizes[last];
  std::vector<int64_t> index(last, 0);
  int64_t in_offset = 0;
  for (int64_t out_offset = 0; out_offset < w.total; out_offset += inner) {
    fn(out_offset, in_offset, inner, w.strides[last]);
    for (size_t d = last; d-- > 0;) {  // advance the counter, innermost outer dim first
      in_offset += w.strides[d];
      if (++index[d] < w.sizes[d]) break;
      in_offset -= w.strides[d] * w.sizes[d];
      index[d] = 0;
    }
  }
}

}  // namespace dnnx
