// GRU's and RNN's gradients on cuDNN: trained as one recurrent layer (rnn_train.h: training-mode
// forward with reserve space, cudnnRNNBackwardData_v8 + cudnnRNNBackwardWeights_v8), every
// direction and layout. Refused: clip and sequence_lens (as on the CPU: OpDef::untrainable in
// ops/rnn/recurrent.cc), and what cuDNN cannot run at all (recurrent_cells.h: GRU's
// linear_before_reset=0, RNN's Sigmoid or one activation per direction; such a node runs its
// forward on the host, which has no place in a CUDA training tail).
#include <string>

#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/rnn/recurrent_cells.h"
#include "backends/cuda/rnn/rnn_train.h"

namespace dnnx::cuda {

namespace {

GradChoice plan_recurrent_grad(const GradRequest& r) {
  const std::string why = recurrent_unsupported_reason(r.node);
  if (!why.empty()) {
    node_fail<UnsupportedModelError>(r.node, "training it on CUDA is not supported: " + why +
                                                 " (train this model with device='cpu')");
  }
  return plan_rnn_train(r, recurrent_rnn_node(r.node, r.inputs, r.outputs.size()));
}

}  // namespace

void register_cuda_recurrent_grad_kernels(KernelRegistry& r, const CudaContext&) {
  r.at("GRU").with_gradient(plan_recurrent_grad);
  r.at("RNN").with_gradient(plan_recurrent_grad);
}

}  // namespace dnnx::cuda
