// Concat's one kernel for all its inputs (concat_cuda.cc, Note [concat in one launch]).
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

template <class U>
void launch_typed(const ConcatInputs& in, void* y, int64_t outer, int64_t row_bytes, cudaStream_t stream) {
  int64_t tiles = 0;  // the most (row, segment) tiles of any input
  for (int i = 0; i < in.count; ++i) {
    const int64_t units = in.chunk[i] / int64_t{sizeof(U)};
    tiles = std::max(tiles, outer * ((units + kSegmentUnits - 1) / kSegmentUnits));
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
