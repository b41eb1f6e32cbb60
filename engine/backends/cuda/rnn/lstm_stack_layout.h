// What one LSTMStack call (ops/rnn/lstm_stack.h) needs from cuDNN, built once at plan time and shared
// by the stack's forward kernel (lstm_stack_cuda.cc) and its training kernel
// (lstm_stack_grad_cuda.cc): the multi-layer RNN descriptor, the data and state descriptors, the
// lengths and every layer's weight layout.
//
// The stack's layers are forward, seq-major, without sequence_lens or initial states (what
// fuse_lstm_stack fuses), so the data is cuDNN's packed seq-major layout without padded I/O: X
// [seq, batch, I] and cuDNN's Y [seq, batch, H] are the bytes of ONNX's X and of the last layer's
// Y [seq, 1, batch, H]. States are [layers, batch, H]; the stack's Y_h, Y_c (and their
// gradients) are the last layer's slice.
#pragma once
#include <vector>

#include "backends/cuda/backend/cuda_context.h"
#include "backends/cuda/rnn/rnn_weights.h"
#include "ops/rnn/lstm_stack.h"

namespace dnnx::cuda {

struct LstmStackLayout {
  LstmStackLayout(const CudaContext& ctx, const LstmStackShape& shape, cudnnMathType_t math,
                  const std::vector<bool>& has_bias);

  // Bytes of one layer's state slice [batch, H] (float32).
  size_t state_slice_bytes() const { return static_cast<size_t>(dims.batch * dims.hidden) * sizeof(float); }
  // Bytes of a whole state [layers, batch, H].
  size_t state_bytes() const { return static_cast<size_t>(layers) * state_slice_bytes(); }
  // Where the last layer's slice starts in a state, in floats.
  size_t last_slice() const { return static_cast<size_t>((layers - 1) * dims.batch * dims.hidden); }
  const int32_t* device_lengths() const { return static_cast<const int32_t*>(lens.get()); }

  int64_t layers = 0;
  LstmDims dims;  // layer 0's; seq, batch, hidden hold for all
  DropoutDescriptor dropout;  // no dropout
  RnnDescriptor rnn;
  TensorDescriptor state;     // [layers, batch, H]
  RnnDataDescriptor x, y;     // [seq, batch, I] and [seq, batch, H], every sequence full
  DeviceMemory lens;          // [batch] int32, all seq
  RnnWeightLayout weights;    // every layer's W, R, B in one weight space
};

// Which layers have B, from the stack node's inputs.
std::vector<bool> lstm_stack_biases(const Node& node, const std::vector<ValueInfo>& inputs);

// The math of a float32 stack: FMA only (fp32), or cuDNN's default, which lets fp32 RNNs use
// TF32 tensor cores (tf32), as lstm_cuda.cc chooses for one layer; and its words for the plan.
cudnnMathType_t lstm_stack_math(const CudaContext& ctx);
const char* lstm_stack_math_name(cudnnMathType_t math);

}  // namespace dnnx::cuda
