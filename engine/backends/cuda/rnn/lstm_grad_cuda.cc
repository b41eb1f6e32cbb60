// LSTM's gradient on cuDNN: the node parsed and trained as one recurrent layer (rnn_train.h:
// training-mode forward with reserve space, cudnnRNNBackwardData_v8 + cudnnRNNBackwardWeights_v8),
// cell CUDNN_LSTM, every direction and layout the CPU gradient takes (lstm_grad_cpu.cc). Refused:
// clip, input_forget and sequence_lens (as on the CPU: OpDef::untrainable in ops/rnn/lstm.cc) and
// trained peepholes (cuDNN's LSTM has none). Stacked layers train as one call instead where the
// tail fuses them (lstm_stack_grad_cuda.cc, Note [stacked LSTMs in training] in
// train/tail_fusion.h).
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/rnn/rnn_node.h"
#include "backends/cuda/rnn/rnn_train.h"
#include "ops/rnn/lstm_attrs.h"

namespace dnnx::cuda {

namespace {

GradChoice plan_lstm_grad(const GradRequest& r) {
  const LstmAttributes attrs = parse_lstm_attributes(r.node);
  // Clip, input_forget and sequence_lens were refused by OpDef::untrainable (ops/rnn/lstm.cc).
  const bool has_p = kLstmP < r.inputs.size() && r.inputs[kLstmP].present;
  if (has_p && r.needs_grad[kLstmP]) {
    node_fail<UnsupportedModelError>(r.node, "training peepholes (input P) is not supported on CUDA: cuDNN's LSTM "
                                             "has none (train this model with device='cpu')");
  }
  RnnNode rnn;
  rnn.cell = kLstmCell;
  rnn.form = RnnForm{attrs.direction, attrs.layout};
  rnn.dims = lstm_dims(r.node, attrs, r.inputs);
  rnn.has = rnn_presence(r.node, r.inputs, r.outputs.size());
  return plan_rnn_train(r, rnn);
}

}  // namespace

void register_cuda_lstm_grad_kernels(KernelRegistry& r, const CudaContext&) {
  r.at("LSTM").with_gradient(plan_lstm_grad);
}

}  // namespace dnnx::cuda
