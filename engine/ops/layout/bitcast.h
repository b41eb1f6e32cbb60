// BitCast's type rule, shared by the op file and the kernels.
//
// Note [bitcast]: BitCast keeps every bit of its input and reads them as the target type, which
// must have the same bit width (onnx: "the target type must have the same bit-width"). The
// engine stores a 4-bit element one per byte in the low half (Note [dtypes]), so int4, uint4
// and float4e2m1 bitcast among themselves by their low 4 bits, not to the 8-bit types. Bool is
// one byte holding 0 or 1 in the engine, so a byte other than 0 bitcast to bool reads as 1 (true,
// as numpy shows such a byte); bool to a byte type gives 0 or 1. On a device, float16, bfloat16
// and float64 values are float32 (python/dnnx/_edges.py, Note [host fallback]), whose bits are
// not the model's: the importer refuses a BitCast to those types there, the op's inference one
// from them (its input is float32 there), and the CPU kernel any width it does not see agree.
#pragma once
#include "ir/tensor.h"

namespace dnnx {

// Bits of one element of `t` as onnx counts them: 4 for int4/uint4/float4e2m1, else 8 * its size.
int bit_width(DType t);

}  // namespace dnnx
