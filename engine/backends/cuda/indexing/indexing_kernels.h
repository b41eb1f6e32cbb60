// Launchers of the indexing kernels (indexing_kernels.cu, topk_kernels.cu,
// arg_extreme_kernels.cu): GatherND, GatherElements, ScatterND, ScatterElements, TopK, ArgMax and
// ArgMin on CUDA. Each queues on `stream` and checks the launch (DeviceError on failure). Indices
// are int32 or int64 (idx_int64) and a negative one counts from the end of its dim.
//
// Note [device index range]: the CPU kernels raise an InputError for an index out of range; a
// kernel cannot report one without a host read that would stall the stream and break CUDA
// graphs. So on CUDA, as Gather's kernel does (layout/gather_axis_kernels.cu), a gather reads
// zeros for an index out of range and a scatter skips that update: no kernel ever reads or
// writes outside its buffers, and each plan row says so ("range check" in its rejected list).
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "ir/tensor.h"
#include "ops/indexing/indexing.h"

namespace dnnx::cuda {

constexpr int kMaxIndexDims = 8;

// GatherND (ops/indexing/gather_nd.h): y [batches, tuples, slice] from data [batches,
// gathered..., slice] and indices [batches, tuples, k]; size / stride: the k gathered dims and
// their strides in data (elements).
struct GatherNDDims {
  int64_t batches = 1, tuples = 1, k = 0, slice = 1, batch_stride = 0;
  int64_t size[kMaxIndexDims] = {};
  int64_t stride[kMaxIndexDims] = {};
};
void launch_gather_nd(const void* data, const void* idx, bool idx_int64, void* y, size_t elem, const GatherNDDims& g,
                      cudaStream_t stream);
// GatherND's gradient keys (train/keyed_row_sums.h): data viewed as rows of `slice` elements
// ([batches * batch_stride / slice, slice]), keys[t] = the row tuple t (of batches * tuples)
// read, or that row count where an index is out of range (it adds nothing).
void launch_gather_nd_keys(const void* idx, bool idx_int64, int* keys, const GatherNDDims& g, cudaStream_t stream);

// GatherElements and ScatterElements: the element of indices at position p (indices' shape
// `index`) names data's element at p with p[axis] = indices[p]; data's strides `data_stride`,
// its size along the axis `axis_size`.
struct ElementsDims {
  int rank = 0, axis = 0;
  int64_t axis_size = 0;
  int64_t index[kMaxIndexDims] = {};
  int64_t data_stride[kMaxIndexDims] = {};
};
// y [indices' shape] = data at the indexed elements; elem: bytes per element (1, 2, 4, 8).
void launch_gather_elements(const void* data, const void* idx, bool idx_int64, void* y, size_t elem,
                            const ElementsDims& g, cudaStream_t stream);

// The element types of the scatters' reductions (a plain scatter moves `elem`-byte values).
enum class ScatterType { Float32, Float16, BFloat16, Int32, Int64 };

// ScatterElements: y (data's shape, already holding data) at each indexed element replaced by
// (or combined, atomically, with) the update at the same position of updates (indices' shape).
// `reduction` None moves elem-byte values; the others read `type`.
void launch_scatter_elements(const void* idx, bool idx_int64, const void* updates, void* y, size_t elem,
                             ScatterType type, ScatterReduction reduction, const ElementsDims& g, cudaStream_t stream);

// ScatterND: y (data's shape, already holding data) with each of `tuples` index tuples of k
// values naming a slice of `slice` elements of data (dims `size`, strides `stride` in
// elements), replaced by or combined with that tuple's slice of updates [tuples, slice].
struct ScatterNDDims {
  int64_t tuples = 0, k = 0, slice = 1;
  int64_t size[kMaxIndexDims] = {};
  int64_t stride[kMaxIndexDims] = {};
};
void launch_scatter_nd(const void* idx, bool idx_int64, const void* updates, void* y, size_t elem, ScatterType type,
                       ScatterReduction reduction, const ScatterNDDims& g, cudaStream_t stream);

// TopK: x [outer, size, inner] -> values, indices [outer, k, inner], each line's k largest
// (or smallest) in order, ties broken by the lower index first (as onnxruntime's and the CPU
// kernel); NaN ranks above every number. `dtype`: float32, float16, bfloat16, int32 or int64.
void launch_topk(const void* x, void* values, int64_t* indices, DType dtype, int64_t outer, int64_t size,
                 int64_t inner, int64_t k, bool largest, cudaStream_t stream);

// ArgMax (max) / ArgMin: x [outer, size, inner] -> y [outer, inner], the index of each line's
// first extreme (the last with select_last), as the CPU's serial scan finds it: a NaN is never
// better than another element, so the result is 0 where the line starts with NaN and skips NaN
// elsewhere (arg_extreme_kernels.cu). `dtype`: float32, float16, bfloat16, int32 or int64.
void launch_arg_extreme(const void* x, int64_t* y, DType dtype, int64_t outer, int64_t size, int64_t inner, bool max,
                        bool select_last, cudaStream_t stream);
// Whether launch_arg_extreme takes a warp per line (lines of the innermost axis of 64 elements or
// more), else a thread.
inline bool arg_extreme_by_warp(int64_t size, int64_t inner) { return inner == 1 && size >= 64; }

}  // namespace dnnx::cuda
