// One recurrent layer (LSTM, GRU or RNN) on cuDNN's RNN v8 API (cudnnRNNForward): forward,
// reverse or bidirectional, with sequence_lens, initial states and both layouts. The op files
// (lstm_cuda.cc, recurrent_cuda.cc) parse the node, refuse what cuDNN cannot run and plan it
// here. ONNX and cuDNN differ in four ways, bridged here:
//  - weights: gate order and storage differ (rnn_weights.h). Constant W, R, B are packed into
//    cuDNN's weight space once, at plan time; weights that are graph inputs are packed into the
//    workspace on every run.
//  - direction "reverse": cuDNN has none. Each sequence's first len steps are reversed into the
//    workspace, run forward, and Y is reversed back (rnn_kernels.h); Y_h, Y_c need nothing.
//  - layout: cuDNN's Y is [seq, batch, D*H] (seq-major data) or [batch, seq, D*H] (batch-major),
//    its states [D, batch, H]. ONNX's layout-0 Y [seq, D, batch, H] is the same bytes when D = 1
//    and a transpose when D = 2; its layout-1 Y [batch, seq, D, H] is cuDNN's batch-major Y as it
//    is. Layout-1 states [batch, D, H] are transposed in and out when D = 2 (rnn_layouts.h).
//  - sequence_lens: cuDNN's padded I/O takes the lengths on the host (data descriptors) and on
//    the device. Absent or constant lengths are fixed at plan time; lengths that are a graph
//    input are read back on every run (one stream synchronisation). cuDNN refuses a length of 0:
//    it runs as 1 and the outputs of that entry are zeroed afterwards (ONNX: 0 there).
// Float16 (precision="fp16", Note [half storage]): X, W, R, B, the states and Y are
// CUDNN_DATA_HALF (W, R, B converted at load), the math precision CUDNN_DATA_FLOAT (fp32
// accumulation and gate arithmetic) with CUDNN_TENSOR_OP_MATH; the glue kernels move elements
// by size. No bfloat16: cudnnSetRNNDescriptor_v8 documents FP16, FP32 and FP64 data only, so
// the registrations store no BFloat16 (kFloatAndFloat16) and under precision="bf16" an RNN
// stays float32 between Casts.
#pragma once
#include <vector>

#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/rnn/rnn_node.h"

namespace dnnx::cuda {

// The forward kernel of `node` (its sizes, cell and form in `rnn`; rnn_node.h), for its inputs'
// element type (float32 or float16) under the context's precision.
KernelChoice plan_rnn_forward(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                              const RnnNode& rnn);

}  // namespace dnnx::cuda
