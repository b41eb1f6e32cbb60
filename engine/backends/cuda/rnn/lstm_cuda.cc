// LSTM on cuDNN's RNN v8 API: the node parsed (ops/rnn/lstm_attrs.h) and planned as one recurrent
// layer (rnn_forward.h: weights, "reverse", layouts, sequence_lens, float16; no bfloat16, which
// cuDNN's RNN descriptor does not document: kFloatAndFloat16), cell CUDNN_LSTM.
// Peepholes, clip and input_forget have no cuDNN counterpart: clip and input_forget are refused
// at load (lstm_unsupported_reason), peepholes at plan time (UnsupportedModelError naming the
// node); either way the node runs on the host inside the CUDA plan (Note [host fallback]). An
// all-zero constant P is no peephole at all and passes.
#include <algorithm>
#include <vector>

#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/rnn/rnn_forward.h"
#include "backends/cuda/rnn/rnn_node.h"
#include "ops/rnn/lstm_attrs.h"

namespace dnnx::cuda {

namespace {

bool all_zero(const ConstTensor& t) {
  if (is_half(t.info.dtype)) {  // 0x0000 and 0x8000 (-0), in float16 and bfloat16 alike
    const auto* p = t.as<uint16_t>();
    return std::all_of(p, p + t.info.bytes() / 2, [](uint16_t v) { return (v & 0x7fffu) == 0; });
  }
  const float* p = t.as<float>();
  return std::all_of(p, p + t.info.bytes() / sizeof(float), [](float v) { return v == 0.0f; });
}

KernelChoice plan_lstm(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs) {
  const LstmAttributes attrs = parse_lstm_attributes(node);
  RnnNode rnn;
  rnn.cell = kLstmCell;
  rnn.form = RnnForm{attrs.direction, attrs.layout};
  rnn.dims = lstm_dims(node, attrs, inputs);
  rnn.has = rnn_presence(node, inputs);
  const bool has_p = kLstmP < inputs.size() && inputs[kLstmP].present;
  if (has_p && !(inputs[kLstmP].constant && all_zero(*inputs[kLstmP].constant))) {
    node_fail<UnsupportedModelError>(node, "peepholes (input P) are not supported on CUDA: cuDNN's LSTM has none "
                                           "(run this model with device='cpu')");
  }
  return plan_rnn_forward(ctx, node, inputs, rnn);
}

}  // namespace

std::string lstm_unsupported_reason(const Node& node) {
  if (node.has_attr("clip")) return "attribute 'clip' is not supported on CUDA: cuDNN's LSTM cannot clip "
                                    "(run this model with device='cpu')";
  if (node.attr_int("input_forget", 0) != 0) {
    return "input_forget=1 is not supported on CUDA: cuDNN's LSTM has no coupled gates (run this model with "
           "device='cpu')";
  }
  return "";
}

void register_cuda_lstm_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("LSTM", [&ctx](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    return plan_lstm(ctx, node, inputs);
  }).with_dtypes(kFloatAndFloat16).refusing(lstm_unsupported_reason);
}

}  // namespace dnnx::cuda
