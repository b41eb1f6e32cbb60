// Launchers of the CUDA kernels for integer and bool values (typed_kernels.cu, where_kernels.cu,
// range_kernels.cu): the arithmetic, comparisons and logic of issue #14 on float32, int32,
// int64 and bool elements, one templated elementwise-broadcast kernel family. The float-only
// kernels with float16 storage stay in binary_kernels.cu. Each launcher queues on `stream` and
// checks the launch (DeviceError on failure); shapes arrive merged at plan time
// (broadcast_plan.h).
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "backends/cuda/layout/glue_kernels.h"

namespace dnnx::cuda {

// The element types of these kernels (DType without the half types: typed_binary.h converts).
enum class ElemType { Float32, Int32, Int64, Bool };

// What a typed binary kernel computes: arithmetic (output of the input's type; Mod's two sign
// rules, ops/elementwise/div_mod.h), comparisons and logic (output bool).
enum class TypedBinary {
  Add, Sub, Mul, Div, ModFloor, ModFmod,
  Equal, Less, Greater, LessOrEqual, GreaterOrEqual,
  And, Or, Xor,
};
enum class TypedUnary { Neg, Abs, Not };

// y[i] = a[.] op b[.] for i < n; rank 0 in `dims`: no broadcast. `in`: the inputs' type, which
// the op must take (the OpDefs have checked it: arithmetic on numbers, logic on bool).
void launch_typed_binary(TypedBinary op, ElemType in, const void* a, const void* b, void* y, int64_t n,
                         const BroadcastDims& dims, cudaStream_t stream);

// y[i] = op x[i] for i < n (Neg, Abs on numbers; Not on bool).
void launch_typed_unary(TypedUnary op, ElemType type, const void* x, void* y, int64_t n, cudaStream_t stream);

// Where's three operands over the output dims (outermost first): per operand (condition, X, Y)
// its element stride along each (0 where it broadcasts).
struct WhereDims {
  int rank = 0;
  int64_t size[kMaxGlueDims] = {};
  int64_t stride[3][kMaxGlueDims] = {};
};

// out[i] = cond[.] ? x[.] : y[.] for i < n; elem: bytes per value (1, 4 or 8).
void launch_where(const void* cond, const void* x, const void* y, void* out, size_t elem, int64_t n,
                  const WhereDims& dims, cudaStream_t stream);

// y[i] = start + i * delta for i < n, start and delta one element each on the device.
void launch_range(ElemType type, const void* start, const void* delta, void* y, int64_t n, cudaStream_t stream);

}  // namespace dnnx::cuda
