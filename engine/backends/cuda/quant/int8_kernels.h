// Launchers of the fused int8 layers' own CUDA kernels (int8_kernels.cu; the conv's layout-changing
// ones in int8_tiles.cu, Note [int8 tiles]), around the int8 tensor core products (cuBLASLt's for
// Int8Gemm/Int8MatMul: int8_gemm_cuda.cc; cuDNN's for Int8Conv: int8_conv_cuda.cc). Each queues
// on `stream` and checks the launch (DeviceError on failure); an empty range launches nothing.
//
// Note [int8 on tensor cores]: the tensor cores multiply signed bytes only, with every tap inside
// the operand (no implicit zero padding may stand for X's zero point). So X is made signed and
// the zero point taken out of the sums:
//   sum_k (x - x_zp)(w - w_zp) = sum_k x' w' - x_zp' * colsum(w')      (exact in int32)
// with w' = w - w_zp (made at plan time; a layer whose w' leaves int8's range stays on the host),
// x' = x ^ 0x80 = x - 128 for uint8 X (x itself for int8), x_zp' = x_zp - 128 (x_zp), and
// colsum(w')[m] the sum of output channel m's w', folded into its int32 bias at plan time. A
// conv's padding then holds x_zp' (int8_nhwc_pad: the conv itself runs unpadded), so a padded
// tap adds (x_zp' - x_zp') w' = 0 as onnxruntime's does. The sums equal the CPU kernel's exactly
// (both are the exact sums modulo 2^32), and the epilogue below is the CPU's arithmetic
// (backends/cpu/quant/int8_epilogue_cpu.cc) operation for operation, without FMA: the layers
// give the CPU's bits.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

// x [rows, k] of int8 or uint8 (x_unsigned) -> out [rows, k_pad] int8: x' of Note [int8 on
// tensor cores], columns k..k_pad-1 zero (W's padded columns are zero too).
void launch_int8_rows(const void* x, bool x_unsigned, int64_t rows, int64_t k, int64_t k_pad, int8_t* out,
                      cudaStream_t stream);

// The padded channels-last X of an unpadded int8 conv:
//   x [N, C, H, W] (int8, or uint8: x_unsigned)  ->  out [N, Hp, Wp, Cp] int8
//   out[n, h, w, c] = x'[n, c, h - pad_h, w - pad_w] inside X, x_zp' (zp) in the padding,
//   0 in the padded channels c >= C (whose filter taps are zero).
// cp must be a multiple of 4 and out 4-byte aligned (a workspace: the kernel stores 4 channels
// at once); x may have any alignment.
struct NhwcPad {
  int64_t n = 0, c = 0, h = 0, w = 0;  // X
  int64_t pad_h = 0, pad_w = 0;        // the top and left pads
  int64_t hp = 0, wp = 0, cp = 0;      // out's spatial dims and channels (cp >= c)
};
void launch_int8_nhwc_pad(const void* x, bool x_unsigned, int8_t zp, const NhwcPad& shape, int8_t* out,
                          cudaStream_t stream);

// Int8Conv@NHWC's X made the unpadded conv's operand (Note [int8 nhwc on cuda] in int8_conv_cuda.cc):
//   x [N, H, W, C] (int8, or uint8: x_unsigned; C a multiple of 4)  ->  out [N, Hp, Wp, C] int8
//   out[n, h, w, c] = x'[n, h - pad_h, w - pad_w, c] inside X, x_zp' (zp) in the padding.
// Whole 4-byte words (4 channels) a thread; x and out 4-byte aligned (arena values, a workspace).
// `shape.cp` must equal `shape.c`.
void launch_int8_nhwc_repad(const void* x, bool x_unsigned, int8_t zp, const NhwcPad& shape, int8_t* out,
                            cudaStream_t stream);

// The requantizing epilogue of the fused int8 layers (the CPU's: qdq_int8_cpu.cc's file comment),
// through register tiles where y is NCHW (Note [int8 tiles] in int8_tiles.cu):
//   sums  int32 [rows, ld]: row r = n * plane + p (a pixel, or a GEMM row), column m (< channels)
//   y     plane > 0: [N, channels, plane] (NCHW); plane 0: [rows, channels] (row-major: 4
//         channels a thread where channels and ld are multiples of 4 and sums, y and z aligned)
//   a = sums[r, m] + ibias[m] (wrapping), v = float(a) * mult[m] + add[m]
//   float output: y = v, 0 where a Relu takes it (v <= 0 or NaN);
//   else q = clamp(rint(v), y_lo - y_zp, y_hi - y_zp) + y_zp (y_lo the zero point after a Relu);
//   residual: r = the same in r's range, minus r_zp; then
//     y = clamp(rint(r_ratio * r + z_ratio * (z - z_zp) + y_zp), y_lo, y_hi), z at y's index.
struct Int8Epilogue {
  const int32_t* sums = nullptr;
  int64_t rows = 0, ld = 0, channels = 0, plane = 0;
  const int32_t* ibias = nullptr;  // [channels], device
  const float* mult = nullptr;     // [channels], device
  const float* add = nullptr;      // [channels], device
  bool float_out = false, relu = false, y_signed = false;
  int32_t y_zp = 0, y_lo = 0, y_hi = 0;
  bool residual = false, z_signed = false;
  const void* z = nullptr;
  int32_t r_zp = 0, r_lo = 0, r_hi = 0, z_zp = 0;
  float r_ratio = 1, z_ratio = 1;
};
void launch_int8_epilogue(const Int8Epilogue& e, void* y, cudaStream_t stream);
// Its NCHW form (plane > 0, int8_tiles.cu), which launch_int8_epilogue calls.
void launch_int8_epilogue_nchw(const Int8Epilogue& e, void* y, cudaStream_t stream);

}  // namespace dnnx::cuda
