// LSTMStack's training on cuDNN: the stacked LSTM layers the trainable tail fused (Note [stacked
// LSTMs in training] in train/tail_fusion.h) train as ONE multi-layer RNN, the calls PyTorch's
// nn.LSTM(num_layers=L) makes: one cudnnRNNForward in training mode, one cudnnRNNBackwardData_v8
// and one cudnnRNNBackwardWeights_v8 for all layers, so cuDNN overlaps the layers (a wavefront
// over layers and time steps) in each direction of the step instead of running L calls in turn.
//
// The kernel runs the stack's forward itself (Note [training forward] in runtime/training.h):
// the reserve space, the packed weights and (when the graph does not read Y) cuDNN's Y stay in the
// layer's kept memory from the forward to the backward. Layouts: lstm_stack_layout.h (X and Y are
// ONNX's bytes; states [layers, batch, H], the stack's Y_h / Y_c the last layer's slice; no
// initial states).
//
// Forward: every layer's W, R, B (current values, on the device) packed into the kept weight space
//   (one launch per 8 layers: WeightCopier); cudnnRNNForward (training) -> Y, reserve; Y_h, Y_c
//   copied out of the last layer's slice.
// Backward: dY as it is (zeros when no gradient reaches Y); dY_h, dY_c into the last layer's slice
//   of zeroed [layers, batch, H] states; BackwardData -> dX (straight into ONNX's dX); when any
//   layer's weight gradient is asked for, BackwardWeights into the zeroed dweight space (cuDNN's
//   one call computes every layer's) and the asked-for blocks unpacked to dW_l, dR_l, dB_l.
#include <algorithm>
#include <climits>
#include <string>

#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/rnn/lstm_stack_layout.h"
#include "backends/cuda/runtime/workspace_carver.h"
#include "backends/cuda/train/zero_grad_kernel.h"

namespace dnnx::cuda {

namespace {

struct StackOutputs {
  bool y = false, y_h = false, y_c = false;
};

// The workspace (shared by every layer: nothing here outlives one call), in byte offsets; a part
// not needed has size 0.
struct WorkParts {
  size_t cudnn = 0, cudnn_bytes = 0;  // cuDNN's work space (training mode)
  size_t hy = 0, cy = 0;              // [layers, batch, H]: the forward's, when Y_h / Y_c are read
  size_t dy = 0;                      // zeros [seq, batch, H], when no gradient reaches Y
  size_t dhy = 0, dcy = 0;            // [layers, batch, H]: dY_h / dY_c in the last layer's slice
  size_t dx = 0;                      // [seq, batch, I], when dX is not asked for
  size_t dweights = 0;                // the weight space's gradient
  size_t total = 0;
};

// The kept memory (the stack's own, from its forward to its backward).
struct KeptParts {
  size_t reserve = 0, reserve_bytes = 0;  // cuDNN's reserve space, every layer's
  size_t weights = 0;                     // the weight space, packed by the forward
  size_t y = 0;                           // cuDNN's Y [seq, batch, H], when the graph does not read Y
  size_t total = 0;
};

class LstmStackTrainKernel final : public GradKernel {
 public:
  LstmStackTrainKernel(const CudaContext& ctx, const LstmStackShape& shape, const StackOutputs& has,
                       cudnnMathType_t math, const std::vector<bool>& has_bias)
      : ctx_(ctx), s_(ctx, shape, math, has_bias), has_(has), copier_(ctx, s_.weights) {
    plan_memory();
  }

  size_t workspace_bytes() const { return work_.total; }
  size_t kept_bytes() const { return kept_.total; }

  // X [seq, batch, I], W_l, R_l, B_l -> Y [seq, 1, batch, H], Y_h, Y_c [1, batch, H].
  void forward(const KernelArgs& args, void* kept) const override {
    auto* ws = static_cast<uint8_t*>(args.workspace);
    auto* k = static_cast<uint8_t*>(kept);
    copier_.pack(args.inputs, k + kept_.weights);
    void* y = has_.y ? args.out<void>(kLstmY) : k + kept_.y;
    auto* hy = has_.y_h ? reinterpret_cast<float*>(ws + work_.hy) : nullptr;
    auto* cy = has_.y_c ? reinterpret_cast<float*>(ws + work_.cy) : nullptr;
    check(cudnnRNNForward(ctx_.cudnn, s_.rnn, CUDNN_FWD_MODE_TRAINING, s_.device_lengths(), s_.x, args.in<void>(kLstmX),
                          s_.y, y, s_.state, nullptr, hy, s_.state, nullptr, cy, s_.weights.bytes, k + kept_.weights,
                          work_.cudnn_bytes, cudnn_space(ws), kept_.reserve_bytes, k + kept_.reserve),
          "cudnnRNNForward (training)");
    if (hy) copy_slice(hy + s_.last_slice(), args.out(kLstmYH), "cudaMemcpyAsync (Y_h)");
    if (cy) copy_slice(cy + s_.last_slice(), args.out(kLstmYC), "cudaMemcpyAsync (Y_c)");
  }

  void run(const GradArgs& args) const override {
    auto* ws = static_cast<uint8_t*>(args.workspace);
    auto* k = static_cast<uint8_t*>(args.kept);
    const void* x = args.inputs[kLstmX];
    const void* y = has_.y ? args.outputs[kLstmY] : k + kept_.y;
    const void* weights = k + kept_.weights;
    const void* dy = has_.y ? args.d_outputs[kLstmY] : nullptr;
    if (!dy) {
      check(cudaMemsetAsync(ws + work_.dy, 0, y_bytes(), ctx_.stream), "cudaMemsetAsync");
      dy = ws + work_.dy;
    }
    const float* dhy = last_layer_state(args, kLstmYH, has_.y_h, ws + work_.dhy);
    const float* dcy = last_layer_state(args, kLstmYC, has_.y_c, ws + work_.dcy);
    void* dx = args.d_inputs[kLstmX] ? static_cast<void*>(args.d_inputs[kLstmX]) : ws + work_.dx;
    check(cudnnRNNBackwardData_v8(ctx_.cudnn, s_.rnn, s_.device_lengths(), s_.y, y, dy, s_.x, dx, s_.state, nullptr,
                                  dhy, nullptr, s_.state, nullptr, dcy, nullptr, s_.weights.bytes, weights,
                                  work_.cudnn_bytes, cudnn_space(ws), kept_.reserve_bytes, k + kept_.reserve),
          "cudnnRNNBackwardData_v8");
    if (!any_weight_gradient(args)) return;
    // cuDNN adds weight gradients (CUDNN_WGRAD_MODE_ADD): start from zeros.
    void* dweights = ws + work_.dweights;
    check(cudaMemsetAsync(dweights, 0, s_.weights.bytes, ctx_.stream), "cudaMemsetAsync");
    check(cudnnRNNBackwardWeights_v8(ctx_.cudnn, s_.rnn, CUDNN_WGRAD_MODE_ADD, s_.device_lengths(), s_.x, x, s_.state,
                                     nullptr, s_.y, y, s_.weights.bytes, dweights, work_.cudnn_bytes, cudnn_space(ws),
                                     kept_.reserve_bytes, k + kept_.reserve),
          "cudnnRNNBackwardWeights_v8");
    copier_.unpack(dweights, args.d_inputs);
  }

 private:
  void plan_memory() {
    size_t reserve = 0;
    check(cudnnGetRNNTempSpaceSizes(ctx_.cudnn, s_.rnn, CUDNN_FWD_MODE_TRAINING, s_.x, &work_.cudnn_bytes, &reserve),
          "cudnnGetRNNTempSpaceSizes");
    const size_t x_bytes = static_cast<size_t>(s_.dims.seq * s_.dims.batch * s_.dims.input) * sizeof(float);
    WorkspaceCarver ws;
    work_.cudnn = ws.part(work_.cudnn_bytes);
    work_.hy = ws.part(has_.y_h ? s_.state_bytes() : 0);
    work_.cy = ws.part(has_.y_c ? s_.state_bytes() : 0);
    work_.dy = ws.part(y_bytes());
    work_.dhy = ws.part(has_.y_h ? s_.state_bytes() : 0);
    work_.dcy = ws.part(has_.y_c ? s_.state_bytes() : 0);
    work_.dx = ws.part(x_bytes);
    work_.dweights = ws.part(s_.weights.bytes);
    work_.total = ws.total();
    WorkspaceCarver kept;
    kept_.reserve_bytes = reserve;
    kept_.reserve = kept.part(reserve);
    kept_.weights = kept.part(s_.weights.bytes);
    kept_.y = kept.part(has_.y ? 0 : y_bytes());
    kept_.total = kept.total();
  }

  size_t y_bytes() const { return static_cast<size_t>(s_.dims.seq * s_.dims.batch * s_.dims.hidden) * sizeof(float); }
  void* cudnn_space(uint8_t* ws) const { return work_.cudnn_bytes ? ws + work_.cudnn : nullptr; }

  void copy_slice(const float* from, float* to, const char* what) const {
    check(cudaMemcpyAsync(to, from, s_.state_slice_bytes(), cudaMemcpyDeviceToDevice, ctx_.stream), what);
  }

  // dY_h / dY_c [1, batch, H] as cuDNN's [layers, batch, H] (zeros below the last layer), or
  // nullptr when no gradient reaches that output.
  const float* last_layer_state(const GradArgs& args, size_t output, bool present, uint8_t* scratch) const {
    const float* d = present ? args.d_outputs[output] : nullptr;
    if (!d) return nullptr;
    auto* state = reinterpret_cast<float*>(scratch);
    check(cudaMemsetAsync(state, 0, s_.state_bytes(), ctx_.stream), "cudaMemsetAsync");
    copy_slice(d, state + s_.last_slice(), "cudaMemcpyAsync (dY_h, dY_c)");
    return state;
  }

  // Whether any layer's W, R or B wants its gradient (the stack node lists all three per layer,
  // "" for an absent B, so every position is in the pointer arrays).
  bool any_weight_gradient(const GradArgs& args) const {
    for (int64_t l = 0; l < s_.layers; ++l) {
      for (LstmInput which : {kLstmW, kLstmR, kLstmB}) {
        if (args.d_inputs[lstm_stack_input(static_cast<size_t>(l), which)]) return true;
      }
    }
    return false;
  }

  const CudaContext& ctx_;
  LstmStackLayout s_;
  StackOutputs has_;
  WeightCopier copier_;
  WorkParts work_;
  KeptParts kept_;
};

GradChoice plan_lstm_stack_grad(const GradRequest& r) {
  const CudaContext& ctx = cuda_context_of(r);
  const LstmStackShape shape = lstm_stack_shape(r.node, r.inputs);
  const LstmDims& d = shape.dims;
  for (int64_t n : {d.seq * d.batch * std::max(d.input, d.hidden), 4 * d.hidden * std::max(d.input, d.hidden)}) {
    if (n > INT_MAX) node_fail<UnsupportedModelError>(r.node, "tensors of more than 2^31-1 elements are not supported");
  }
  const std::vector<std::string> names = lstm_stack_layer_names(r.node);
  std::string layer_list;
  for (const std::string& name : names) layer_list += (layer_list.empty() ? "" : ", ") + name;
  if (d.batch == 0 || d.seq == 0 || d.input == 0) {
    return zero_grad_choice(ctx, r, "zeros (empty sequence, batch or input; layers " + layer_list + ")");
  }
  StackOutputs has;
  has.y = r.node.has_output(kLstmY);
  has.y_h = r.node.has_output(kLstmYH);
  has.y_c = r.node.has_output(kLstmYC);
  const cudnnMathType_t math = lstm_stack_math(ctx);
  auto kernel = std::make_unique<LstmStackTrainKernel>(ctx, shape, has, math, lstm_stack_biases(r.node, r.inputs));
  const std::string layers = std::to_string(shape.layers) + " layers in one call: " + layer_list;
  GradChoice choice;
  choice.algorithm = "cudnnRNNBackwardData_v8 + cudnnRNNBackwardWeights_v8 on the forward's reserve space (" +
                     layers + "; " + lstm_stack_math_name(math) + ")";
  choice.runs_forward = true;
  choice.forward_algorithm = "cudnnRNNForward (training, " + layers + "; reserve space kept for backward, weights "
                             "packed per step)";
  choice.workspace_bytes = kernel->workspace_bytes();
  choice.kept_bytes = kernel->kept_bytes();
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace

void register_cuda_lstm_stack_grad_kernels(KernelRegistry& r, const CudaContext&) { r.at(kLstmStackOp).with_gradient(plan_lstm_stack_grad); }

}  // namespace dnnx::cuda
