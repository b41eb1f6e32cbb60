// What the CUDA indexing files (gather_nd_, gather_elements_, scatter_nd_, scatter_elements_
// and topk_cuda.cc) share on the host: the index type check, the scatters' element type, the
// copy of data into a scatter's output, and the plan row's note on indices out of range (Note
// [device index range] in indexing_kernels.h). Inline, one copy for all of them.
#pragma once
#include <string>
#include <vector>

#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/indexing/indexing_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"

namespace dnnx::cuda {

// Whether `t` (the node's indices, `what`) is int64 (true) or int32 (false); any other type is
// refused (UnsupportedModelError naming the node: the node runs on the host).
inline bool int64_indices(const Node& node, const TensorInfo& t, const char* what) {
  if (t.dtype == DType::Int64) return true;
  if (t.dtype == DType::Int32) return false;
  node_fail<UnsupportedModelError>(node, std::string("the CUDA kernel takes int32 or int64 ") + what + ", not " +
                                             dtype_name(t.dtype));
}

// The element type of a scatter's reduction on data of `t`; bool (or anything else) with a
// reduction is refused (the node runs on the host).
inline ScatterType scatter_type(const Node& node, DType t, ScatterReduction reduction) {
  switch (t) {
    case DType::Float32: return ScatterType::Float32;
    case DType::Float16: return ScatterType::Float16;
    case DType::BFloat16: return ScatterType::BFloat16;
    case DType::Int32: return ScatterType::Int32;
    case DType::Int64: return ScatterType::Int64;
    default: break;
  }
  if (reduction == ScatterReduction::None) return ScatterType::Float32;  // unread: the values are moved
  node_fail<UnsupportedModelError>(node, std::string("the CUDA kernel has no reduction on ") + dtype_name(t) +
                                             " data");
}

// A scatter's first step: its output holds data (unless the planner let the two share a buffer).
inline void copy_data(const void* data, void* y, size_t bytes, cudaStream_t stream) {
  if (data != y && bytes > 0) {
    check(cudaMemcpyAsync(y, data, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync (scatter's data)");
  }
}

// The plan row's note (Note [device index range]): a gather's range check, or a scatter's.
inline void note_index_range(KernelChoice& choice, bool scatter) {
  choice.rejected.push_back({"range check", scatter ? "an index out of range skips its update on CUDA (the CPU raises)"
                                                    : "an index out of range gives zeros on CUDA (the CPU raises)"});
}

// data's dims (`shape`) as ElementsDims for indices of shape `index` and `axis` (refused past
// kMaxIndexDims dims).
inline ElementsDims elements_dims(const Node& node, const Shape& shape, const Shape& index, int64_t axis) {
  if (shape.size() > static_cast<size_t>(kMaxIndexDims)) {
    node_fail<UnsupportedModelError>(node, "the CUDA kernel takes at most " + std::to_string(kMaxIndexDims) +
                                               " dims, not data " + shape_str(shape));
  }
  ElementsDims g;
  g.rank = static_cast<int>(shape.size());
  g.axis = static_cast<int>(axis);
  g.axis_size = shape[axis];
  const std::vector<int64_t> strides = packed_strides(shape);
  for (int d = 0; d < g.rank; ++d) {
    g.index[d] = index[d];
    g.data_stride[d] = strides[d];
  }
  return g;
}

}  // namespace dnnx::cuda
