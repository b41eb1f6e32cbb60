// ONNX's LSTM weights in cuDNN's weight space (lstm_cuda.cc).
//
// ONNX: W [D, 4H, I] and R [D, 4H, H], gate blocks in the order i, o, f, c; B [D, 8H], the W
// biases (i, o, f, c) then the R biases. cuDNN: per direction ("pseudo layer" 0 forward, 1
// backward) eight linear layers, 0-3 for the input (W) and 4-7 for the recurrent (R) matrices,
// gates in the order i, f, c, o, each a row-major [H, I] or [H, H] matrix (the same bytes as
// ONNX's gate block) with its own bias of H (CUDNN_RNN_DOUBLE_BIAS: Wb and Rb stay separate, as
// ONNX has them). Where each block goes is asked of cuDNN (cudnnGetRNNWeightParams), never
// assumed; what results is a list of copies.
#pragma once
#include <cstddef>
#include <vector>

#include "backends/cuda/cuda_context.h"
#include "ops/lstm_attrs.h"

namespace dnnx::cuda {

// One block: `count` elements of ONNX input `input` (kLstmW, kLstmR or kLstmB) from element
// `src`, to element `dst` of the weight space. Elements are float32, or float16 when the RNN's
// data type is CUDNN_DATA_HALF (precision="fp16": the constants were converted at load).
struct WeightCopy {
  size_t input = 0;
  size_t src = 0;
  size_t dst = 0;
  size_t count = 0;
};

struct LstmWeightLayout {
  size_t bytes = 0;  // cuDNN's weight space (cudnnGetRNNWeightSpaceSize)
  size_t elem = sizeof(float);  // bytes per element: 4, or 2 for float16
  std::vector<WeightCopy> copies;  // the biases only when the node has B; the rest stays zero
};

// The RNN descriptor of one LSTM layer as dnnx runs it, forward and backward (lstm_cuda.cc,
// lstm_grad_cuda.cc): standard algorithm, double bias, linear input, `data_type` data (float, or
// half with precision="fp16") and float compute, padded I/O, no dropout (one layer: cuDNN applies
// dropout between layers only).
void set_lstm_descriptor(const CudaContext& ctx, const LstmDims& d, cudnnMathType_t math, RnnDescriptor& rnn,
                         DropoutDescriptor& dropout, cudnnDataType_t data_type = CUDNN_DATA_FLOAT);

// Layer `layer` of a multi-layer RNN (lstm_stack_cuda.cc): cuDNN's pseudo layers layer * D + dir;
// `d.input` is that layer's input width (the previous layer's D * H after layer 0).
LstmWeightLayout lstm_weight_layout(const CudaContext& ctx, const RnnDescriptor& rnn, const LstmDims& d,
                                    bool has_bias, size_t elem = sizeof(float), int layer = 0);

// Packs constant weights once: `host[i]` is input i's data (index kLstmW, kLstmR, kLstmB), and the
// packed space is uploaded to `space` (layout.bytes, device).
void pack_weights_from_host(const CudaContext& ctx, const LstmWeightLayout& layout, const void* const host[],
                            void* space);
// The float32 form, for one LSTM node's inputs (X, W, R, B; a stack of layers has more: use the
// form above).
inline void pack_weights_from_host(const CudaContext& ctx, const LstmWeightLayout& layout, const float* const host[],
                                   void* space) {
  const void* const bytes[kLstmB + 1] = {host[kLstmX], host[kLstmW], host[kLstmR], host[kLstmB]};
  pack_weights_from_host(ctx, layout, bytes, space);
}

// Packs weights that live on the device (graph inputs) into `space`, queued on the stream.
void pack_weights_on_device(const CudaContext& ctx, const LstmWeightLayout& layout, const void* const* inputs,
                            void* space);

// The inverse of packing, for gradients: the blocks of a (dweight) space on the device copied
// out to ONNX's layout, d_inputs[i] for input i (kLstmW, kLstmR, kLstmB); a null d_inputs[i] is
// skipped. Every element of each non-null target is written (the blocks tile W, R and B).
void unpack_weights_on_device(const CudaContext& ctx, const LstmWeightLayout& layout, const void* space,
                              float* const* d_inputs);

}  // namespace dnnx::cuda
