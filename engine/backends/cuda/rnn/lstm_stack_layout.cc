#include "backends/cuda/rnn/lstm_stack_layout.h"

#include <utility>

namespace dnnx::cuda {

LstmStackLayout::LstmStackLayout(const CudaContext& ctx, const LstmStackShape& shape, cudnnMathType_t math,
                                 const std::vector<bool>& has_bias)
    : layers(shape.layers), dims(shape.dims) {
  set_rnn_descriptor(ctx, kLstmCell, dims, math, rnn, dropout, CUDNN_DATA_FLOAT, static_cast<int32_t>(layers));
  const int state_dims[3] = {static_cast<int>(layers), static_cast<int>(dims.batch), static_cast<int>(dims.hidden)};
  const int strides[3] = {state_dims[1] * state_dims[2], state_dims[2], 1};
  check(cudnnSetTensorNdDescriptor(state, CUDNN_DATA_FLOAT, 3, state_dims, strides), "cudnnSetTensorNdDescriptor");
  const std::vector<int> full(static_cast<size_t>(dims.batch), static_cast<int>(dims.seq));
  float fill = 0.0f;
  for (auto [desc, width] : {std::pair{x.get(), dims.input}, std::pair{y.get(), dims.hidden}}) {
    check(cudnnSetRNNDataDescriptor(desc, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                                    static_cast<int>(dims.seq), static_cast<int>(dims.batch), static_cast<int>(width),
                                    full.data(), &fill),
          "cudnnSetRNNDataDescriptor");
  }
  lens = device_alloc(ctx, full.size() * sizeof(int32_t), "cudaMalloc (LSTM lengths)");
  check(cudaMemcpyAsync(lens.get(), full.data(), full.size() * sizeof(int32_t), cudaMemcpyHostToDevice, ctx.stream),
        "cudaMemcpyAsync (LSTM lengths)");
  check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");  // `full` dies here
  weights = lstm_stack_weight_layout(ctx, rnn, dims, has_bias);
}

std::vector<bool> lstm_stack_biases(const Node& node, const std::vector<ValueInfo>& inputs) {
  std::vector<bool> has_bias;
  for (size_t l = 0; l < lstm_stack_layer_names(node).size(); ++l) {
    const size_t b = lstm_stack_input(l, kLstmB);
    has_bias.push_back(b < inputs.size() && inputs[b].present);
  }
  return has_bias;
}

cudnnMathType_t lstm_stack_math(const CudaContext& ctx) {
  return ctx.options.precision == Precision::Tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
}

const char* lstm_stack_math_name(cudnnMathType_t math) {
  return math == CUDNN_FMA_MATH ? "fp32 (CUDNN_FMA_MATH)" : "tf32 permitted (CUDNN_DEFAULT_MATH)";
}

}  // namespace dnnx::cuda
