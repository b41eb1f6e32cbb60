// Tensor pieces that Loop and Scan move between iterations, on the host, for any dtype.
#pragma once
#include <vector>

#include "ir/tensor.h"

namespace dnnx {

// [outer, dim, inner] around `axis` of `s`: the elements before and after it (inner in elements).
void around(const Shape& s, int64_t axis, int64_t& outer, int64_t& inner);
// t's slice at `index` along `axis`, that axis removed: [a, L, b] -> [a, b].
ConstTensorPtr slice_along(const ConstTensor& t, int64_t axis, int64_t index);

// The parts (one shape and dtype) stacked along a new axis `axis` (in [0, rank]): L x [a, b] ->
// [a, L, b]. `empty_shape`: the result's shape when there are no parts (L = 0), with `dtype`.
ConstTensorPtr stack_along(const std::vector<ConstTensorPtr>& parts, int64_t axis, const Shape& empty_shape, DType dtype);

// Whether a one-element tensor (bool or any numeric type) is nonzero; false for an empty one.
bool truth_of(const ConstTensor& t);
// A one-element integer tensor as int64.
int64_t int_of(const ConstTensor& t);

ConstTensorPtr scalar_int64(int64_t v);
ConstTensorPtr scalar_bool(bool v);

}  // namespace dnnx
