// The cells of a reduction on the CPU: the output cell i of X [shape] reduced over some dims
// reads x[base[i] + red[j]] for each j, in X's order (the Reduce* ops, MeanVarianceNormalization).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "ir/tensor.h"

namespace dnnx {

// Cell i's elements are x[base[i] + red[j]], j < red.size().
struct ReduceCells {
  std::vector<int64_t> base;
  std::vector<int64_t> red;
};

inline ReduceCells reduce_cells(const Shape& x, const std::vector<bool>& reduced) {
  std::vector<int64_t> strides(x.size(), 1);
  for (size_t d = x.size(); d-- > 1;) strides[d - 1] = strides[d] * x[d];
  ReduceCells c;
  c.base = {0};
  c.red = {0};
  for (size_t d = 0; d < x.size(); ++d) {  // outer dims first: each list stays in X's order
    std::vector<int64_t>& list = reduced[d] ? c.red : c.base;
    std::vector<int64_t> next;
    next.reserve(list.size() * x[d]);
    for (int64_t at : list) {
      for (int64_t k = 0; k < x[d]; ++k) next.push_back(at + k * strides[d]);
    }
    list = std::move(next);
  }
  return c;
}

}  // namespace dnnx
