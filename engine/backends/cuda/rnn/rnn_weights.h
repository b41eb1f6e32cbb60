// ONNX's LSTM, GRU and RNN weights in cuDNN's weight space (rnn_forward.cc, rnn_train.cc,
// lstm_stack_cuda.cc, lstm_stack_grad_cuda.cc).
//
// ONNX: W [D, G*H, I] and R [D, G*H, H] with G gate blocks (LSTM i, o, f, c; GRU z, r, h; RNN
// one); B [D, 2*G*H], the W biases then the R biases. cuDNN: per direction ("pseudo layer" 0
// forward, 1 backward) 2*G linear layers, 0..G-1 for the input (W) and G..2G-1 for the
// recurrent (R) matrices, gates in cuDNN's order (CudnnCell, rnn_node.h), each a row-major
// [H, I] or [H, H] matrix (the same bytes as ONNX's gate block) with its own bias of H
// (CUDNN_RNN_DOUBLE_BIAS: Wb and Rb stay separate, as ONNX has them). Where each block goes is
// asked of cuDNN (cudnnGetRNNWeightParams), never assumed; what results is a list of copies.
#pragma once
#include <cstddef>
#include <vector>

#include "backends/cuda/backend/cuda_context.h"
#include "backends/cuda/rnn/rnn_kernels.h"
#include "backends/cuda/rnn/rnn_node.h"
#include "ops/rnn/lstm_attrs.h"

namespace dnnx::cuda {

// One block: `count` elements of the node's input `input` (kRnnW, kRnnR or kRnnB; an LSTM
// stack's lstm_stack_input(l, ...)) from element `src`, to element `dst` of the weight space.
// Elements are float32, or float16 when the RNN's data type is CUDNN_DATA_HALF
// (precision="fp16": the constants were converted at load).
struct WeightCopy {
  size_t input = 0;
  size_t src = 0;
  size_t dst = 0;
  size_t count = 0;
};

struct RnnWeightLayout {
  size_t bytes = 0;  // cuDNN's weight space (cudnnGetRNNWeightSpaceSize)
  size_t elem = sizeof(float);  // bytes per element: 4, or 2 for float16
  std::vector<WeightCopy> copies;  // the biases only when the node has B; the rest stays zero
};

// The RNN descriptor of the `cell` layers dnnx runs, forward and backward (rnn_forward.cc,
// rnn_train.cc; LSTM with `layers` > 1: lstm_stack_cuda.cc, lstm_stack_grad_cuda.cc): standard
// algorithm, double bias, linear input, unidirectional or bidirectional (d.num_dir), `data_type`
// data (float, or half with precision="fp16") and float compute, no dropout (cuDNN applies
// dropout between layers only, and dnnx asks for none). One layer runs with padded I/O (lengths
// per entry, either layout); a stack runs packed seq-major data, every sequence full.
void set_rnn_descriptor(const CudaContext& ctx, const CudnnCell& cell, const LstmDims& d, cudnnMathType_t math,
                        RnnDescriptor& rnn, DropoutDescriptor& dropout, cudnnDataType_t data_type = CUDNN_DATA_FLOAT,
                        int32_t layers = 1);

// Where the blocks of W, R and (has_bias) B go. Layer `layer` of a multi-layer RNN
// (lstm_stack_cuda.cc): cuDNN's pseudo layers layer * D + dir; `d.input` is that layer's input
// width (the previous layer's D * H after layer 0).
RnnWeightLayout rnn_weight_layout(const CudaContext& ctx, const RnnDescriptor& rnn, const CudnnCell& cell,
                                  const LstmDims& d, bool has_bias, size_t elem = sizeof(float), int layer = 0);

// Every layer of an LSTMStack (ops/rnn/lstm_stack.h) in one layout: layer l's W, R, B are the stack
// node's inputs lstm_stack_input(l, ...); `d` is layer 0's dims (the input width H after it);
// has_bias[l]: whether layer l has B. float32.
RnnWeightLayout lstm_stack_weight_layout(const CudaContext& ctx, const RnnDescriptor& rnn, const LstmDims& d,
                                         const std::vector<bool>& has_bias);

// Packs constant weights once: `host[i]` is input i's data (index kRnnW, kRnnR, kRnnB), and the
// packed space is uploaded to `space` (layout.bytes, device).
void pack_weights_from_host(const CudaContext& ctx, const RnnWeightLayout& layout, const void* const host[],
                            void* space);

// A layout's copies between device tensors and a weight space, as a few kernel launches (one per
// kCopySlots distinct inputs: one for a layer, one for a stack of up to 8 layers) instead of one
// cudaMemcpy per block; the block table is uploaded once, here. For weights that are graph inputs
// (rnn_forward.cc) and for training, which packs the current weights on every forward and unpacks
// the weight gradients after every backward (rnn_train.cc, lstm_stack_grad_cuda.cc).
class WeightCopier {
 public:
  WeightCopier() = default;
  WeightCopier(const CudaContext& ctx, const RnnWeightLayout& layout);

  // space (layout.bytes) <- the blocks of tensors[c.input] (the node's input pointers); where the
  // blocks do not tile the space (no B: the bias blocks) it is zeroed first. Queued on the stream.
  void pack(const void* const* tensors, void* space) const;
  // tensors[c.input] <- the blocks of `space` (a dweight space), float32; a null tensor is
  // skipped, and every element of a non-null one is written (the blocks tile W, R and B).
  void unpack(const void* space, float* const* tensors) const;

 private:
  struct Launch {
    std::vector<size_t> inputs;  // slot -> node input
    size_t first = 0, blocks = 0;  // entries [first, first + blocks) of the table
    int64_t longest = 0;           // the longest block, in elements
  };
  void launch(const Launch& l, const void* const* tensors, void* space, bool into_space) const;

  const CudaContext* ctx_ = nullptr;
  size_t bytes_ = 0, elem_ = sizeof(float);
  bool tiles_space_ = true;
  DeviceMemory table_;  // BlockCopy entries
  std::vector<Launch> launches_;
};

}  // namespace dnnx::cuda
