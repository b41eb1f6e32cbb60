// A dense layer over few rows, hand-written for what no library call covers at small batches:
// y[M,N] = epilogue(alpha * op(A)[M,K] op(B)[K,N] + beta * C) where the epilogue is nothing, a
// Relu, or a Softmax over each row (Gemm+Softmax: cuBLAS has no softmax epilogue, so the pair is
// a GEMM and a cudnnSoftmaxForward, two launches for a few dozen values at batch 1).
// One warp per output column n of a group of up to kDenseRows rows: its lanes walk K (coalesced
// for B stored [N,K], transB=1, the layout of PyTorch's Linear; as float4 where K and the
// pointers allow), each lane keeping several loads in flight (at batch 1 the time is the memory
// latency, not the arithmetic), the per-lane sums added by shuffles in a fixed order
// (deterministic), plain fp32 FMAs (no TF32). With the Softmax one
// block holds a row group's N values in shared memory and normalises each row (max first, as
// the CPU backend does). C is broadcast by strides (0 along a broadcast dim). fp32 storage only.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

enum class DenseEpilogue { None, Relu, Softmax };

constexpr int kDenseRows = 4;             // rows one block computes
constexpr int kDenseSoftmaxMaxCols = 1024;  // the row group's N values in shared memory
// The most B elements the row groups may read between them (each group reads all of B) where
// Gemm+Softmax takes the kernel over a whole batch: past it, a GEMM's tiles, which read B once
// per output tile, win.
constexpr double kDenseMaxBReads = 1 << 24;

struct DenseRows {
  int m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 0.0f;
  int64_t c_row_stride = 0, c_col_stride = 0;  // C's strides along M and N; ignored without C
  DenseEpilogue epilogue = DenseEpilogue::None;

  // Multiply-adds, and the B elements every row group reads again (what the planner weighs).
  double macs() const { return static_cast<double>(m) * n * k; }
  double b_reads() const { return static_cast<double>((m + kDenseRows - 1) / kDenseRows) * n * k; }
};

// Whether the kernel takes this shape (the grid's row groups, the softmax row in shared memory).
bool dense_rows_supported(const DenseRows& d);

// c may be null (no C). y must not overlap a, b or c.
void launch_dense_rows(const float* a, const float* b, const float* c, float* y, const DenseRows& d,
                       cudaStream_t stream);

}  // namespace dnnx::cuda
