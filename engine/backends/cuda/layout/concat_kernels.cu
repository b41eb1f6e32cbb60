// Concat's one kernel for all its inputs (concat_cuda.cc, Note [concat in one launch]).
//
// Note [short concat rows]: a channels-last Concat (axis 3) has one row per pixel, and each
// input's share of a row is short: DenseNet-121's 32 new channels are 128 bytes (8 units of 16)
// a pixel. concat_rows gives a block one (row, segment) tile, so 248 of its 256 threads idled
// there: DenseNet-121 with its Concats channels-last ran 17.16 ms at tf32 (batch 64, H100)
// against 12.38 with them in ONNX's layout and 122 layout conversions. Where every input's row
// is shorter than a segment, concat_units spreads each input's (row, unit) pairs over the
// threads instead (one division per unit).
#include <cstdint>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

constexpr int64_t kSegmentUnits = 4 * 256;  // a block's share of one row of one input: 4 units a thread

// Input blockIdx.y's rows, U (1 to 16 bytes) at a time: row o of input i goes to bytes
// [column_i, column_i + chunk_i) of output row o. Blocks stride over (row, segment) tiles.
template <class U>
__global__ void concat_rows(ConcatInputs in, uint8_t* __restrict__ y, int64_t outer, int64_t row_bytes) {
  const int i = blockIdx.y;
  const int64_t units = in.chunk[i] / int64_t{sizeof(U)};
  const int64_t segments = (units + kSegmentUnits - 1) / kSegmentUnits;
  const U* __restrict__ x = reinterpret_cast<const U*>(in.data[i]);
  for (int64_t t = blockIdx.x; t < outer * segments; t += gridDim.x) {
    const int64_t o = t / segments, first = t % segments * kSegmentUnits;
    const int64_t last = first + kSegmentUnits < units ? first + kSegmentUnits : units;
    const U* src = x + o * units;
    U* dst = reinterpret_cast<U*>(y + o * row_bytes + in.column[i]);
    for (int64_t j = first + threadIdx.x; j < last; j += blockDim.x) dst[j] = src[j];
  }
}

// Input blockIdx.y's rows as one run of (row, unit) pairs: unit j of row o for pair o * units + j.
template <class U, class Index>
__global__ void concat_units(ConcatInputs in, uint8_t* __restrict__ y, Index outer, Index row_bytes) {
  const int i = blockIdx.y;
  const Index units = static_cast<Index>(in.chunk[i] / int64_t{sizeof(U)});
  const Index total = outer * units, column = static_cast<Index>(in.column[i]);
  const U* __restrict__ x = reinterpret_cast<const U*>(in.data[i]);
  for (Index t = blockIdx.x * Index(blockDim.x) + threadIdx.x; t < total; t += Index(gridDim.x) * blockDim.x) {
    const Index o = t / units, j = t - o * units;
    reinterpret_cast<U*>(y + o * row_bytes + column)[j] = x[t];
  }
}

template <class U>
void launch_typed(const ConcatInputs& in, void* y, int64_t outer, int64_t row_bytes, cudaStream_t stream) {
  int64_t tiles = 0, most_units = 0;  // the most (row, segment) tiles, and units a row, of any input
  for (int i = 0; i < in.count; ++i) {
    const int64_t units = in.chunk[i] / int64_t{sizeof(U)};
    tiles = std::max(tiles, outer * ((units + kSegmentUnits - 1) / kSegmentUnits));
    most_units = std::max(most_units, units);
  }
  if (most_units < kSegmentUnits) {  // Note [short concat rows]
    const int64_t pairs = outer * most_units;
    const dim3 grid(grid_for(pairs), static_cast<unsigned>(in.count));
    if (outer * row_bytes < (int64_t{1} << 31)) {
      concat_units<U, int32_t><<<grid, kBlock, 0, stream>>>(in, static_cast<uint8_t*>(y), static_cast<int32_t>(outer),
                                                            static_cast<int32_t>(row_bytes));
    } else {
      concat_units<U, int64_t><<<grid, kBlock, 0, stream>>>(in, static_cast<uint8_t*>(y), outer, row_bytes);
    }
    return;
  }
  const dim3 grid(static_cast<unsigned>(std::max<int64_t>(1, std::min(tiles, kMaxBlocks))),
                  static_cast<unsigned>(in.count));
  concat_rows<U><<<grid, kBlock, 0, stream>>>(in, static_cast<uint8_t*>(y), outer, row_bytes);
}

}  // namespace

void launch_concat(const ConcatInputs& in, void* y, int64_t outer, int64_t row_bytes, cudaStream_t stream) {
  if (in.count == 0 || outer == 0) return;
  // the widest unit that divides every chunk, row and column and every address
  uint64_t bits = reinterpret_cast<uintptr_t>(y) | static_cast<uint64_t>(row_bytes);
  for (int i = 0; i < in.count; ++i) {
    bits |= reinterpret_cast<uintptr_t>(in.data[i]) | static_cast<uint64_t>(in.chunk[i]) |
            static_cast<uint64_t>(in.column[i]);
  }
  if (bits % 16 == 0) {
    launch_typed<uint4>(in, y, outer, row_bytes, stream);
  } else if (bits % 4 == 0) {
    launch_typed<uint32_t>(in, y, outer, row_bytes, stream);
  } else if (bits % 2 == 0) {
    launch_typed<uint16_t>(in, y, outer, row_bytes, stream);
  } else {
    launch_typed<uint8_t>(in, y, outer, row_bytes, stream);
  }
  check_launch("concat kernel");
}

}  // namespace dnnx::cuda
