// GRU and RNN on cuDNN's RNN v8 API: the node parsed (ops/rnn/recurrent_attrs.h), refused where
// cuDNN has no counterpart (recurrent_cells.h: GRU's linear_before_reset=0, RNN's Sigmoid or one
// activation per direction, clip; such a node runs on the host inside the CUDA plan) and planned
// as one recurrent layer (rnn_forward.h: weights, "reverse", layouts, sequence_lens, float16).
#include <vector>

#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/rnn/recurrent_cells.h"
#include "backends/cuda/rnn/rnn_forward.h"

namespace dnnx::cuda {

void register_cuda_recurrent_kernels(KernelRegistry& r, const CudaContext& ctx) {
  for (const char* op : {"GRU", "RNN"}) {
    r.add(op, [&ctx](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
      return plan_rnn_forward(ctx, node, inputs, recurrent_rnn_node(node, inputs));
    }).with_dtypes(kFloatAndFloat16).refusing(recurrent_unsupported_reason);
  }
}

}  // namespace dnnx::cuda
