// Launchers of QuantizeLinear's and DequantizeLinear's CUDA kernels (quant_kernels.cu). Each
// queues on `stream` and checks the launch (DeviceError on failure); an empty x launches nothing.
// The arithmetic is the CPU's IntCodec (backends/cpu/quant/quant_codec.h), onnxruntime's:
//   quantize    y = saturate(round_half_even(x / scale) + zero_point); NaN gives 0
//   dequantize  y = float(x - zero_point) * scale (the difference in 64-bit integers)
// x is seen as [outer, axis_len, inner] around the node's axis, and each element reads the
// scale and zero point entry its QuantLayout names (Note [quantization granularity]: per
// tensor, per axis or blocked).
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "ops/quant/quant_layout.h"

namespace dnnx::cuda {

// The integer types the kernels store (the float8 and 4-bit types run on the host).
enum class QuantInt { Int8, UInt8, Int16, UInt16, Int32 };

// x float32 (or int32: x_int32) -> y of `type` (not Int32); zero_point of `type`, or null (0).
void launch_quantize(const void* x, bool x_int32, const float* scale, const void* zero_point, void* y, QuantInt type,
                     const QuantLayout& layout, cudaStream_t stream);

// x of `type` -> y float32; zero_point of `type`, or null (0).
void launch_dequantize(const void* x, const float* scale, const void* zero_point, float* y, QuantInt type,
                       const QuantLayout& layout, cudaStream_t stream);

}  // namespace dnnx::cuda
