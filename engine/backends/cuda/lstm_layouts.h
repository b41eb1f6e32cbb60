// The gathers between ONNX's LSTM layouts and cuDNN's, shared by the LSTM forward
// (lstm_cuda.cc) and gradient (lstm_grad_cuda.cc) kernels. States: cuDNN's [D, batch, H] against
// ONNX's layout-1 [batch, D, H]; elem is the element size in bytes.
#pragma once
#include <initializer_list>
#include <utility>

#include "backends/cuda/glue_kernels.h"
#include "ops/lstm_attrs.h"

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

}  // namespace dnnx::cuda
