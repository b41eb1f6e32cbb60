// The gathers between ONNX's LSTM, GRU and RNN layouts and cuDNN's, shared by the forward
// (rnn_forward.cc) and training (rnn_train.cc) kernels. States: cuDNN's [D, batch, H] against
// ONNX's layout-1 [batch, D, H]; Y: cuDNN's [seq, batch, D*H] (or [batch, seq, D*H]) against
// ONNX's [seq, D, batch, H] (or [batch, seq, D, H]), with time reversed for direction "reverse"
// (cuDNN runs the reversed sequences forward). elem is the element size in bytes.
#pragma once
#include <initializer_list>
#include <utility>

#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/rnn/rnn_kernels.h"
#include "backends/cuda/rnn/rnn_node.h"
#include "ops/rnn/lstm_attrs.h"

namespace dnnx::cuda {

// The gather kernel's walk: output dims outermost first, each (size, stride in the source).
inline BroadcastDims walk(std::initializer_list<std::pair<int64_t, int64_t>> dims) {
  BroadcastDims out;
  for (const auto& dim : dims) {
    out.size[out.rank] = dim.first;
    out.stride_a[out.rank] = dim.second;
    ++out.rank;
  }
  return out;
}

// [batch, D, H] -> [D, batch, H] (an initial state, or a state's gradient, in for cuDNN).
inline void state_to_cudnn(const LstmDims& d, const void* state, void* out, size_t elem, cudaStream_t stream) {
  const BroadcastDims dims = walk({{d.num_dir, d.hidden}, {d.batch, d.num_dir * d.hidden}, {d.hidden, 1}});
  launch_gather(state, out, elem, d.num_dir * d.batch * d.hidden, dims, stream);
}

// [D, batch, H] -> [batch, D, H] (cuDNN's final state, or its gradient, out to ONNX).
inline void state_from_cudnn(const LstmDims& d, const void* state, void* out, size_t elem, cudaStream_t stream) {
  const BroadcastDims dims = walk({{d.batch, d.hidden}, {d.num_dir, d.batch * d.hidden}, {d.hidden, 1}});
  launch_gather(state, out, elem, d.num_dir * d.batch * d.hidden, dims, stream);
}

// Whether cuDNN's Y and ONNX's Y differ (then Y goes through y_from_cudnn / y_to_cudnn):
// direction "reverse", or layout 0 with two directions.
inline bool y_differs(const RnnForm& a, const LstmDims& d) {
  return a.reversed() || (d.num_dir == 2 && !a.batch_major());
}

// cuDNN's Y -> ONNX's Y (where y_differs): reversed back in time within each entry's length
// `lens` (device), or [seq, batch, D, H] -> [seq, D, batch, H].
inline void y_from_cudnn(const RnnForm& a, const LstmDims& d, const void* y, const int32_t* lens, void* out,
                         size_t elem, cudaStream_t stream) {
  if (a.reversed()) {
    launch_reverse_sequences(y, out, elem, lens, SequenceDims{d.seq, d.batch, d.hidden, a.batch_major()}, stream);
    return;
  }
  const int64_t h = d.hidden, nd = d.num_dir;
  const BroadcastDims dims = walk({{d.seq, d.batch * nd * h}, {nd, h}, {d.batch, nd * h}, {h, 1}});
  launch_gather(y, out, elem, d.seq * nd * d.batch * h, dims, stream);
}

// ONNX's Y (or its gradient) -> cuDNN's (where y_differs): the inverse of y_from_cudnn.
inline void y_to_cudnn(const RnnForm& a, const LstmDims& d, const void* y, const int32_t* lens, void* out,
                       size_t elem, cudaStream_t stream) {
  if (a.reversed()) {  // reversing is its own inverse
    y_from_cudnn(a, d, y, lens, out, elem, stream);
    return;
  }
  const int64_t h = d.hidden, nd = d.num_dir;  // [seq, D, batch, H] -> [seq, batch, D, H]
  const BroadcastDims dims = walk({{d.seq, nd * d.batch * h}, {d.batch, h}, {nd, d.batch * h}, {h, 1}});
  launch_gather(y, out, elem, d.seq * d.batch * nd * h, dims, stream);
}

}  // namespace dnnx::cuda
