// LSTMStack (ops/rnn/lstm_stack.h, made by the fuse_lstm_stack pass) on cuDNN: every layer in ONE
// cudnnRNNForward with numLayers = layers, so cuDNN overlaps the layers (a wavefront over layers
// and time steps) instead of running them one after the other, as one LSTM node each would
// (lstm_cuda.cc). This is the call PyTorch's nn.LSTM(num_layers=L) makes.
//
// The pass fuses only forward, seq-major layers of one hidden size, without sequence_lens or
// initial states, with constant weights. So:
//  - weights: every layer's W, R, B packed once, at plan time, into one weight space (layer l is
//    cuDNN's pseudo layer l; rnn_weights.h), the input width H from layer 1 on.
//  - data: every sequence is full, so the input is cuDNN's packed seq-major layout without
//    padded I/O (the same bytes as ONNX's X [seq, batch, I]); cuDNN's Y [seq, batch, H] is the
//    last layer's ONNX Y [seq, 1, batch, H] as it is.
//  - states: cuDNN's hy, cy are [layers, batch, H]; Y_h, Y_c [1, batch, H] are the last layer's
//    slice, copied out of the workspace. hx, cx are zeros (null).
// Descriptors and the weight space are built once here, at plan time (lstm_stack_layout.h, shared
// with the stack's training kernel, lstm_stack_grad_cuda.cc); a run is the one call and at most
// two small copies (CUDA-graph capturable).
#include <algorithm>
#include <climits>
#include <utility>

#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/rnn/lstm_stack_layout.h"
#include "backends/cuda/runtime/workspace_carver.h"

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
  LstmStackKernel(const CudaContext& ctx, const LstmStackShape& shape, const StackOutputs& has, cudnnMathType_t math,
                  const std::vector<bool>& has_bias)
      : ctx_(ctx), s_(ctx, shape, math, has_bias), has_(has) {}

  // Packs every layer's constant W, R, B (host[i]: the node's input i, null when absent) into
  // one weight space, once.
  void pack_weights(const std::vector<const float*>& host) {
    weights_ = device_alloc(ctx_, s_.weights.bytes, "cudaMalloc (LSTM weights)");
    const std::vector<const void*> bytes(host.begin(), host.end());  // every layer's inputs, not 4
    pack_weights_from_host(ctx_, s_.weights, bytes.data(), weights_.get());
  }

  size_t plan_workspace() {
    size_t reserve = 0;
    check(cudnnGetRNNTempSpaceSizes(ctx_.cudnn, s_.rnn, CUDNN_FWD_MODE_INFERENCE, s_.x, &parts_.cudnn_bytes, &reserve),
          "cudnnGetRNNTempSpaceSizes");
    WorkspaceCarver ws;
    parts_.cudnn = ws.part(parts_.cudnn_bytes);
    parts_.y = ws.part(has_.y ? 0 : static_cast<size_t>(s_.dims.seq * s_.dims.batch * s_.dims.hidden) * sizeof(float));
    parts_.hy = ws.part(has_.y_h ? s_.state_bytes() : 0);
    parts_.cy = ws.part(has_.y_c ? s_.state_bytes() : 0);
    return ws.total();
  }

  // x [seq, batch, I]; Y [seq, 1, batch, H]; Y_h, Y_c [1, batch, H] (the last layer's).
  void run(const KernelArgs& args) const override {
    const size_t last_state = s_.state_slice_bytes();
    auto* ws = static_cast<uint8_t*>(args.workspace);
    float* y = has_.y ? args.out(kLstmY) : reinterpret_cast<float*>(ws + parts_.y);
    float* hy = has_.y_h ? reinterpret_cast<float*>(ws + parts_.hy) : nullptr;
    float* cy = has_.y_c ? reinterpret_cast<float*>(ws + parts_.cy) : nullptr;
    check(cudnnRNNForward(ctx_.cudnn, s_.rnn, CUDNN_FWD_MODE_INFERENCE, s_.device_lengths(), s_.x, args.in(kLstmX),
                          s_.y, y, s_.state, nullptr, hy, s_.state, nullptr, cy, s_.weights.bytes, weights_.get(),
                          parts_.cudnn_bytes, parts_.cudnn_bytes ? ws + parts_.cudnn : nullptr, 0, nullptr),
          "cudnnRNNForward");
    // [layers, batch, H] -> the last layer's [1, batch, H]
    if (has_.y_h) {
      check(cudaMemcpyAsync(args.out(kLstmYH), hy + s_.last_slice(), last_state, cudaMemcpyDeviceToDevice,
                            ctx_.stream),
            "cudaMemcpyAsync (Y_h)");
    }
    if (has_.y_c) {
      check(cudaMemcpyAsync(args.out(kLstmYC), cy + s_.last_slice(), last_state, cudaMemcpyDeviceToDevice,
                            ctx_.stream),
            "cudaMemcpyAsync (Y_c)");
    }
  }

 private:
  const CudaContext& ctx_;
  LstmStackLayout s_;
  StackOutputs has_;
  DeviceMemory weights_;  // every layer's W, R, B, packed at plan time
  StackWorkspace parts_;
};

// An empty sequence or batch: Y is empty, Y_h and Y_c [1, batch, H] are zeros (as on the CPU).
class EmptyStackKernel final : public Kernel {
 public:
  EmptyStackKernel(const CudaContext& ctx, const StackOutputs& has, size_t state_bytes)
      : ctx_(ctx), has_(has), state_bytes_(state_bytes) {}
  void run(const KernelArgs& args) const override {
    if (has_.y_h) check(cudaMemsetAsync(args.out(kLstmYH), 0, state_bytes_, ctx_.stream), "cudaMemsetAsync");
    if (has_.y_c) check(cudaMemsetAsync(args.out(kLstmYC), 0, state_bytes_, ctx_.stream), "cudaMemsetAsync");
  }

 private:
  const CudaContext& ctx_;
  StackOutputs has_;
  size_t state_bytes_;
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
  for (size_t l = 0; l < names.size(); ++l) {
    for (LstmInput which : {kLstmW, kLstmR, kLstmB}) {
      const size_t i = lstm_stack_input(l, which);
      const bool present = i < inputs.size() && inputs[i].present;
      if (present && !inputs[i].constant) {
        node_fail<InvalidModelError>(node, "the weights of layer " + std::to_string(l) + " ('" + names[l] +
                                               "') must be constants (the fuse_lstm_stack pass fuses no others)");
      }
      if (present) host[i] = inputs[i].constant->as<float>();
    }
  }
  StackOutputs has;
  has.y = node.has_output(kLstmY);
  has.y_h = node.has_output(kLstmYH);
  has.y_c = node.has_output(kLstmYC);

  const cudnnMathType_t math = lstm_stack_math(ctx);
  KernelChoice choice;
  std::string layer_list;
  for (const std::string& name : names) layer_list += (layer_list.empty() ? "" : ", ") + name;
  if (d.batch > 0 && d.seq > 0) {
    auto kernel = std::make_unique<LstmStackKernel>(ctx, shape, has, math, lstm_stack_biases(node, inputs));
    kernel->pack_weights(host);
    choice.workspace_bytes = kernel->plan_workspace();
    choice.kernel = std::move(kernel);
    choice.algorithm = "cudnnRNNForward (CUDNN_RNN_ALGO_STANDARD, " + std::to_string(shape.layers) +
                       " layers in one call: " + layer_list + ")";
  } else {
    choice.kernel = std::make_unique<EmptyStackKernel>(ctx, has, static_cast<size_t>(d.batch * d.hidden) * sizeof(float));
    choice.algorithm = "none (empty sequence or batch; layers " + layer_list + ")";
  }
  choice.math = lstm_stack_math_name(math);
  return choice;
}

}  // namespace

std::string lstm_stack_unsupported_reason(const CudaContext& ctx) {
  // fp16: each LSTM node runs alone in float16. bf16: the LSTMs have no bfloat16 kernel
  // (kFloatAndFloat16) and stay float32, which the stack runs.
  if (ctx.options.precision == Precision::Fp16) {
    return std::string(kLstmStackOp) + " runs float32 data only (with precision fp16 each LSTM node runs alone)";
  }
  return "";
}

void register_cuda_lstm_stack_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add(kLstmStackOp, [&ctx](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    return plan_lstm_stack(ctx, node, inputs);
  }).refusing([&ctx](const Node&) { return lstm_stack_unsupported_reason(ctx); });
}

}  // namespace dnnx::cuda
