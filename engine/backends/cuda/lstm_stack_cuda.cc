// LSTMStack (ops/lstm_stack.h, made by the fuse_lstm_stack pass) on cuDNN: every layer in ONE
// cudnnRNNForward with numLayers = layers, so cuDNN overlaps the layers (a wavefront over layers
// and time steps) instead of running them one after the other, as one LSTM node each would
// (lstm_cuda.cc). This is the call PyTorch's nn.LSTM(num_layers=L) makes.
//
// The pass fuses only forward, seq-major layers of one hidden size, without sequence_lens or
// initial states, with constant weights. So:
//  - weights: every layer's W, R, B packed once, at plan time, into one weight space (layer l is
//    cuDNN's pseudo layer l; lstm_weights.h), the input width H from layer 1 on.
//  - data: every sequence is full, so the input is cuDNN's packed seq-major layout without
//    padded I/O (the same bytes as ONNX's X [seq, batch, I]); cuDNN's Y [seq, batch, H] is the
//    last layer's ONNX Y [seq, 1, batch, H] as it is.
//  - states: cuDNN's hy, cy are [layers, batch, H]; Y_h, Y_c [1, batch, H] are the last layer's
//    slice, copied out of the workspace. hx, cx are zeros (null).
// Descriptors and the weight space are built once here, at plan time; a run is the one call
// and at most two small copies (CUDA-graph capturable).
#include <algorithm>
#include <climits>
#include <utility>

#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/lstm_weights.h"
#include "backends/cuda/workspace_carver.h"
#include "ops/lstm_stack.h"

namespace dnnx::cuda {

namespace {

struct StackOutputs {
  bool y = false, y_h = false, y_c = false;
};

// The workspace, part by part (byte offsets; a part not needed has size 0).
struct StackWorkspace {
  size_t cudnn = 0, cudnn_bytes = 0;  // cuDNN's own
  size_t y = 0;                       // [seq, batch, H]: only when the graph does not read Y
  size_t hy = 0, cy = 0;              // [layers, batch, H]: when Y_h / Y_c are read
};

class LstmStackKernel final : public Kernel {
 public:
  LstmStackKernel(const CudaContext& ctx, const LstmStackShape& shape, const StackOutputs& has)
      : ctx_(ctx), layers_(shape.layers), d_(shape.dims), has_(has) {}

  // The RNN and data descriptors for `layers_` layers and full-length sequences.
  void set_up(cudnnMathType_t math) {
    check(cudnnSetDropoutDescriptor(dropout_, ctx_.cudnn, 0.0f, nullptr, 0, 0), "cudnnSetDropoutDescriptor");
    check(cudnnSetRNNDescriptor_v8(rnn_, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                   CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, math,
                                   static_cast<int32_t>(d_.input), static_cast<int32_t>(d_.hidden),
                                   static_cast<int32_t>(d_.hidden), static_cast<int32_t>(layers_), dropout_,
                                   CUDNN_RNN_PADDED_IO_DISABLED),
          "cudnnSetRNNDescriptor_v8");
    const int dims[3] = {static_cast<int>(layers_), static_cast<int>(d_.batch), static_cast<int>(d_.hidden)};
    const int strides[3] = {dims[1] * dims[2], dims[2], 1};
    check(cudnnSetTensorNdDescriptor(state_, CUDNN_DATA_FLOAT, 3, dims, strides), "cudnnSetTensorNdDescriptor");

    const std::vector<int> lens(static_cast<size_t>(d_.batch), static_cast<int>(d_.seq));
    float fill = 0.0f;
    for (auto [desc, width] : {std::pair{x_.get(), d_.input}, std::pair{y_.get(), d_.hidden}}) {
      check(cudnnSetRNNDataDescriptor(desc, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                                      static_cast<int>(d_.seq), static_cast<int>(d_.batch), static_cast<int>(width),
                                      lens.data(), &fill),
            "cudnnSetRNNDataDescriptor");
    }
    lens_ = device_alloc(lens.size() * sizeof(int32_t), "cudaMalloc (LSTM lengths)");
    check(cudaMemcpyAsync(lens_.get(), lens.data(), lens.size() * sizeof(int32_t), cudaMemcpyHostToDevice,
                          ctx_.stream),
          "cudaMemcpyAsync (LSTM lengths)");
    check(cudaStreamSynchronize(ctx_.stream), "cudaStreamSynchronize");  // `lens` dies here
  }

  // Packs every layer's constant W, R, B (host[i]: the node's input i, null when absent) into
  // one weight space, once.
  void pack_weights(const std::vector<const float*>& host, const std::vector<bool>& has_bias) {
    LstmWeightLayout all;
    for (int64_t l = 0; l < layers_; ++l) {
      LstmDims layer = d_;
      if (l > 0) layer.input = d_.hidden;  // layer l reads layer l-1's h
      const LstmWeightLayout one =
          lstm_weight_layout(ctx_, rnn_, layer, has_bias[static_cast<size_t>(l)], sizeof(float), static_cast<int>(l));
      all.bytes = one.bytes;
      for (WeightCopy c : one.copies) {
        // c.input is an LSTM input position (kLstmW, kLstmR, kLstmB): the stack's own for layer l.
        c.input = lstm_stack_input(static_cast<size_t>(l), static_cast<LstmInput>(c.input));
        all.copies.push_back(c);
      }
    }
    weight_bytes_ = all.bytes;
    weights_ = device_alloc(all.bytes, "cudaMalloc (LSTM weights)");
    const std::vector<const void*> bytes(host.begin(), host.end());  // every layer's inputs, not 4
    pack_weights_from_host(ctx_, all, bytes.data(), weights_.get());
  }

  size_t plan_workspace() {
    size_t reserve = 0;
    check(cudnnGetRNNTempSpaceSizes(ctx_.cudnn, rnn_, CUDNN_FWD_MODE_INFERENCE, x_, &parts_.cudnn_bytes, &reserve),
          "cudnnGetRNNTempSpaceSizes");
    const size_t f = sizeof(float);
    const size_t states = static_cast<size_t>(layers_ * d_.batch * d_.hidden) * f;
    WorkspaceCarver ws;
    parts_.cudnn = ws.part(parts_.cudnn_bytes);
    parts_.y = ws.part(has_.y ? 0 : static_cast<size_t>(d_.seq * d_.batch * d_.hidden) * f);
    parts_.hy = ws.part(has_.y_h ? states : 0);
    parts_.cy = ws.part(has_.y_c ? states : 0);
    return ws.total();
  }

  // x [seq, batch, I]; Y [seq, 1, batch, H]; Y_h, Y_c [1, batch, H] (the last layer's).
  void run(const KernelArgs& args) const override {
    if (d_.batch == 0) return;
    const size_t last_state = static_cast<size_t>(d_.batch * d_.hidden) * sizeof(float);
    if (d_.seq == 0) {  // no step at all: Y is empty, Y_h and Y_c are zeros (as on the CPU)
      if (has_.y_h) check(cudaMemsetAsync(args.out(kLstmYH), 0, last_state, ctx_.stream), "cudaMemsetAsync");
      if (has_.y_c) check(cudaMemsetAsync(args.out(kLstmYC), 0, last_state, ctx_.stream), "cudaMemsetAsync");
      return;
    }
    auto* ws = static_cast<uint8_t*>(args.workspace);
    float* y = has_.y ? args.out(kLstmY) : reinterpret_cast<float*>(ws + parts_.y);
    float* hy = has_.y_h ? reinterpret_cast<float*>(ws + parts_.hy) : nullptr;
    float* cy = has_.y_c ? reinterpret_cast<float*>(ws + parts_.cy) : nullptr;
    check(cudnnRNNForward(ctx_.cudnn, rnn_, CUDNN_FWD_MODE_INFERENCE, static_cast<const int32_t*>(lens_.get()), x_,
                          args.in(kLstmX), y_, y, state_, nullptr, hy, state_, nullptr, cy, weight_bytes_,
                          weights_.get(), parts_.cudnn_bytes, parts_.cudnn_bytes ? ws + parts_.cudnn : nullptr, 0,
                          nullptr),
          "cudnnRNNForward");
    // [layers, batch, H] -> the last layer's [1, batch, H]
    const size_t last = static_cast<size_t>((layers_ - 1) * d_.batch * d_.hidden);
    if (has_.y_h) {
      check(cudaMemcpyAsync(args.out(kLstmYH), hy + last, last_state, cudaMemcpyDeviceToDevice, ctx_.stream),
            "cudaMemcpyAsync (Y_h)");
    }
    if (has_.y_c) {
      check(cudaMemcpyAsync(args.out(kLstmYC), cy + last, last_state, cudaMemcpyDeviceToDevice, ctx_.stream),
            "cudaMemcpyAsync (Y_c)");
    }
  }

 private:
  const CudaContext& ctx_;
  int64_t layers_;
  LstmDims d_;  // layer 0's; seq, batch, hidden hold for all
  StackOutputs has_;
  DropoutDescriptor dropout_;  // no dropout (inference: cuDNN applies none)
  RnnDescriptor rnn_;
  TensorDescriptor state_;  // [layers, batch, H], for hy and cy
  RnnDataDescriptor x_, y_;  // [seq, batch, I] and [seq, batch, H], every sequence full
  DeviceMemory lens_;        // [batch] int32, all seq
  DeviceMemory weights_;     // every layer's W, R, B, packed at plan time
  size_t weight_bytes_ = 0;
  StackWorkspace parts_;
};

KernelChoice plan_lstm_stack(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs) {
  const LstmStackShape shape = lstm_stack_shape(node, inputs);
  const LstmDims& d = shape.dims;
  for (int64_t n : {d.seq * d.batch * std::max(d.input, d.hidden), 4 * d.hidden * std::max(d.input, d.hidden)}) {
    if (n > INT_MAX) node_fail<UnsupportedModelError>(node, "tensors of more than 2^31-1 elements are not supported");
  }
  if (d.input == 0) node_fail<UnsupportedModelError>(node, "input size 0 is not supported on CUDA");
  const std::vector<std::string> names = lstm_stack_layer_names(node);
  std::vector<const float*> host(inputs.size(), nullptr);
  std::vector<bool> has_bias;
  for (size_t l = 0; l < names.size(); ++l) {
    for (LstmInput which : {kLstmW, kLstmR, kLstmB}) {
      const size_t i = lstm_stack_input(l, which);
      const bool present = i < inputs.size() && inputs[i].present;
      if (present && !inputs[i].constant) {
        node_fail<InvalidModelError>(node, "the weights of layer " + std::to_string(l) + " ('" + names[l] +
                                               "') must be constants (the fuse_lstm_stack pass fuses no others)");
      }
      if (present) host[i] = inputs[i].constant->as<float>();
      if (which == kLstmB) has_bias.push_back(present);
    }
  }
  StackOutputs has;
  has.y = node.has_output(kLstmY);
  has.y_h = node.has_output(kLstmYH);
  has.y_c = node.has_output(kLstmYC);

  // fp32: FMA only. tf32: cuDNN's default math, which lets fp32 RNNs use TF32 tensor cores
  // (as lstm_cuda.cc chooses for one layer).
  const bool tf32 = ctx.options.precision == Precision::Tf32;
  auto kernel = std::make_unique<LstmStackKernel>(ctx, shape, has);
  KernelChoice choice;
  std::string layer_list;
  for (const std::string& name : names) layer_list += (layer_list.empty() ? "" : ", ") + name;
  if (d.batch > 0 && d.seq > 0) {
    kernel->set_up(tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH);
    kernel->pack_weights(host, has_bias);
    choice.workspace_bytes = kernel->plan_workspace();
    choice.algorithm = "cudnnRNNForward (CUDNN_RNN_ALGO_STANDARD, " + std::to_string(shape.layers) +
                       " layers in one call: " + layer_list + ")";
  } else {
    choice.algorithm = "none (empty sequence or batch; layers " + layer_list + ")";
  }
  choice.math = tf32 ? "tf32 permitted (CUDNN_DEFAULT_MATH)" : "fp32 (CUDNN_FMA_MATH)";
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace

std::string lstm_stack_unsupported_reason(const CudaContext& ctx) {
  if (ctx.options.precision == Precision::Fp16) {
    return std::string(kLstmStackOp) + " runs float32 data only (with precision fp16 each LSTM node runs alone)";
  }
  return "";
}

void register_cuda_lstm_stack_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add(kLstmStackOp, [&ctx](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    return plan_lstm_stack(ctx, node, inputs);
  });
}

}  // namespace dnnx::cuda
