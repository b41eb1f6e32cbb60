// LSTM's gradient on cuDNN (cudnnRNNBackwardData_v8 + cudnnRNNBackwardWeights_v8) for one layer,
// every direction and layout the CPU gradient takes (lstm_grad_cpu.cc), bridged to ONNX as the
// forward kernel is (lstm_cuda.cc: weight layout, "reverse" by reversing the sequences, layout-0
// bidirectional Y and layout-1 bidirectional states transposed: rnn_layouts.h).
//
// The kernel runs the layer's forward too (Note [training forward] in runtime/training.h):
// cuDNN's backward reads the reserve space of a forward in CUDNN_FWD_MODE_TRAINING, so the tail's
// forward of this layer is that training-mode cudnnRNNForward, and its reserve space, the packed
// weights and cuDNN's Y (where it is not ONNX's Y as is) stay in the layer's kept memory until the
// backward. No forward is run twice.
//
// Forward: pack W, R, B (the current values, on the device) into the kept weight space (one
// launch: WeightCopier); X reversed / states transposed into the workspace where cuDNN's layout
// differs; cudnnRNNForward (training) -> Y, Y_h, Y_c, reserve.
// Backward: dY (zeros where no gradient reaches Y), dY_h, dY_c to cuDNN's layouts; BackwardData ->
// dX, dh0, dc0; BackwardWeights adds into the zeroed dweight space -> unpacked to dW, dR, dB (one
// launch). Refused at plan time: clip, input_forget, sequence_lens (as on the CPU) and peepholes
// (cuDNN's LSTM has none). Stacked layers train as one call instead where the tail fuses them
// (lstm_stack_grad_cuda.cc, Note [stacked LSTMs in training] in train/tail_fusion.h).
#include <climits>
#include <string>

#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/rnn/rnn_layouts.h"
#include "backends/cuda/rnn/rnn_weights.h"
#include "backends/cuda/runtime/workspace_carver.h"
#include "backends/cuda/train/zero_grad_kernel.h"

namespace dnnx::cuda {

namespace {

// Which optional inputs and outputs the node has (the call's pointer arrays are only as long as
// the node's lists).
struct LstmGradPresence {
  bool b = false, initial_h = false, initial_c = false;
  bool y = false, y_h = false, y_c = false;
};

// The workspace (shared by every layer, so nothing here outlives one call), part by part (byte
// offsets; a part not needed has size 0).
struct WorkParts {
  size_t cudnn = 0, cudnn_bytes = 0;  // cuDNN's work space (training mode)
  size_t x = 0;                       // X reversed (reverse only)
  size_t dy = 0, dx = 0;              // cuDNN's dY and dX [seq, batch, D*H or I], where not ONNX's
  size_t hx = 0, cx = 0, hy = 0, cy = 0, dhy = 0, dcy = 0, dhx = 0, dcx = 0;  // [D, batch, H]: layout 1, D = 2
  size_t dweights = 0;                // the weight space's gradient
  size_t total = 0;
};

// The kept memory (the layer's own, from its forward to its backward).
struct KeptParts {
  size_t reserve = 0, reserve_bytes = 0;  // cuDNN's reserve space
  size_t weights = 0;                     // the weight space, packed by the forward
  size_t y = 0;                           // cuDNN's Y, where it is not ONNX's Y as is
  size_t total = 0;
};

class LstmTrainKernel final : public GradKernel {
 public:
  LstmTrainKernel(const CudaContext& ctx, const LstmAttributes& attrs, const LstmDims& d, const LstmGradPresence& has,
                  cudnnMathType_t math)
      : ctx_(ctx), attrs_(attrs), d_(d), has_(has) {
    set_lstm_descriptor(ctx_, d_, math, rnn_, dropout_);
    const int dims[3] = {static_cast<int>(d_.num_dir), static_cast<int>(d_.batch), static_cast<int>(d_.hidden)};
    const int strides[3] = {dims[1] * dims[2], dims[2], 1};
    check(cudnnSetTensorNdDescriptor(state_, CUDNN_DATA_FLOAT, 3, dims, strides), "cudnnSetTensorNdDescriptor");
    weights_ = lstm_weight_layout(ctx_, rnn_, d_, has_.b);
    copier_ = WeightCopier(ctx_, weights_);
    // Every sequence is full length (sequence_lens is refused).
    const std::vector<int> lens(static_cast<size_t>(d_.batch), static_cast<int>(d_.seq));
    lens_ = device_alloc(lens.size() * sizeof(int32_t), "cudaMalloc (LSTM lengths)");
    check(cudaMemcpyAsync(lens_.get(), lens.data(), lens.size() * sizeof(int32_t), cudaMemcpyHostToDevice, ctx_.stream),
          "cudaMemcpyAsync (LSTM lengths)");
    check(cudaStreamSynchronize(ctx_.stream), "cudaStreamSynchronize");
    const cudnnRNNDataLayout_t layout =
        batch_major() ? CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED : CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED;
    float fill = 0.0f;
    check(cudnnSetRNNDataDescriptor(x_desc_, CUDNN_DATA_FLOAT, layout, static_cast<int>(d_.seq),
                                    static_cast<int>(d_.batch), static_cast<int>(d_.input), lens.data(), &fill),
          "cudnnSetRNNDataDescriptor (x)");
    check(cudnnSetRNNDataDescriptor(y_desc_, CUDNN_DATA_FLOAT, layout, static_cast<int>(d_.seq),
                                    static_cast<int>(d_.batch), static_cast<int>(d_.num_dir * d_.hidden), lens.data(),
                                    &fill),
          "cudnnSetRNNDataDescriptor (y)");
    plan_memory();
  }

  size_t workspace_bytes() const { return work_.total; }
  size_t kept_bytes() const { return kept_.total; }
  bool reversed() const { return attrs_.direction == LstmDirection::Reverse; }
  bool batch_major() const { return attrs_.layout == RnnLayout::BatchMajor; }
  bool states_transposed() const { return batch_major() && d_.num_dir == 2; }
  // cuDNN's Y is kept apart from ONNX's Y unless it is ONNX's Y byte for byte.
  bool y_kept() const { return !has_.y || y_differs(attrs_, d_); }

  // X, W, R, B, (sequence_lens), initial_h, initial_c -> Y, Y_h, Y_c (ONNX layouts, lstm_attrs.h).
  void forward(const KernelArgs& args, void* kept) const override {
    auto* ws = static_cast<uint8_t*>(args.workspace);
    auto* k = static_cast<uint8_t*>(kept);
    copier_.pack(args.inputs, k + kept_.weights);
    const void* x = cudnn_x(args.inputs, ws);
    const void* hx = state_in(args.inputs, kLstmInitialH, has_.initial_h, ws + work_.hx);
    const void* cx = state_in(args.inputs, kLstmInitialC, has_.initial_c, ws + work_.cx);
    void* y = y_kept() ? k + kept_.y : args.out<void>(kLstmY);
    void* hy = has_.y_h ? (states_transposed() ? ws + work_.hy : args.out<void>(kLstmYH)) : nullptr;
    void* cy = has_.y_c ? (states_transposed() ? ws + work_.cy : args.out<void>(kLstmYC)) : nullptr;
    check(cudnnRNNForward(ctx_.cudnn, rnn_, CUDNN_FWD_MODE_TRAINING, lens(), x_desc_, x, y_desc_, y, state_, hx, hy,
                          state_, cx, cy, weights_.bytes, k + kept_.weights, work_.cudnn_bytes, cudnn_space(ws),
                          kept_.reserve_bytes, k + kept_.reserve),
          "cudnnRNNForward (training)");
    if (has_.y && y_kept()) y_from_cudnn(attrs_, d_, y, lens(), args.out<void>(kLstmY), sizeof(float), ctx_.stream);
    if (has_.y_h && states_transposed()) state_from_cudnn(d_, hy, args.out<void>(kLstmYH), sizeof(float), ctx_.stream);
    if (has_.y_c && states_transposed()) state_from_cudnn(d_, cy, args.out<void>(kLstmYC), sizeof(float), ctx_.stream);
  }

  void run(const GradArgs& args) const override {
    auto* ws = static_cast<uint8_t*>(args.workspace);
    auto* k = static_cast<uint8_t*>(args.kept);
    const void* x = cudnn_x(args.inputs, ws);
    const void* hx = state_in(args.inputs, kLstmInitialH, has_.initial_h, ws + work_.hx);
    const void* cx = state_in(args.inputs, kLstmInitialC, has_.initial_c, ws + work_.cx);
    const void* y = y_kept() ? k + kept_.y : args.outputs[kLstmY];
    const void* weights = k + kept_.weights;

    // dY in cuDNN's layout: zeros where no gradient reaches Y.
    const float* onnx_dy = has_.y ? args.d_outputs[kLstmY] : nullptr;
    const void* dy = onnx_dy;
    if (!onnx_dy) {
      check(cudaMemsetAsync(ws + work_.dy, 0, y_bytes(), ctx_.stream), "cudaMemsetAsync");
      dy = ws + work_.dy;
    } else if (y_differs(attrs_, d_)) {
      y_to_cudnn(attrs_, d_, onnx_dy, lens(), ws + work_.dy, sizeof(float), ctx_.stream);
      dy = ws + work_.dy;
    }
    const void* dhy = has_.y_h ? state_in(args.d_outputs, kLstmYH, args.d_outputs[kLstmYH] != nullptr,
                                          ws + work_.dhy)
                               : nullptr;
    const void* dcy = has_.y_c ? state_in(args.d_outputs, kLstmYC, args.d_outputs[kLstmYC] != nullptr,
                                          ws + work_.dcy)
                               : nullptr;

    // dX: straight into ONNX's dX where the layouts agree, else through the workspace (cuDNN
    // writes it even when it is not asked for).
    float* onnx_dx = args.d_inputs[kLstmX];
    void* dx = onnx_dx && !reversed() ? static_cast<void*>(onnx_dx) : ws + work_.dx;
    float* onnx_dhx = has_.initial_h ? args.d_inputs[kLstmInitialH] : nullptr;
    float* onnx_dcx = has_.initial_c ? args.d_inputs[kLstmInitialC] : nullptr;
    void* dhx = onnx_dhx && states_transposed() ? static_cast<void*>(ws + work_.dhx) : onnx_dhx;
    void* dcx = onnx_dcx && states_transposed() ? static_cast<void*>(ws + work_.dcx) : onnx_dcx;
    check(cudnnRNNBackwardData_v8(ctx_.cudnn, rnn_, lens(), y_desc_, y, dy, x_desc_, dx, state_, hx, dhy, dhx, state_,
                                  cx, dcy, dcx, weights_.bytes, weights, work_.cudnn_bytes, cudnn_space(ws),
                                  kept_.reserve_bytes, k + kept_.reserve),
          "cudnnRNNBackwardData_v8");
    if (onnx_dx && reversed()) {
      launch_reverse_sequences(dx, onnx_dx, sizeof(float), lens(), SequenceDims{d_.seq, d_.batch, d_.input, batch_major()},
                               ctx_.stream);
    }
    if (onnx_dhx && states_transposed()) state_from_cudnn(d_, dhx, onnx_dhx, sizeof(float), ctx_.stream);
    if (onnx_dcx && states_transposed()) state_from_cudnn(d_, dcx, onnx_dcx, sizeof(float), ctx_.stream);

    if (args.d_inputs[kLstmW] || args.d_inputs[kLstmR] || (has_.b && args.d_inputs[kLstmB])) {
      // cuDNN adds weight gradients (CUDNN_WGRAD_MODE_ADD): start from zeros.
      void* dweights = ws + work_.dweights;
      check(cudaMemsetAsync(dweights, 0, weights_.bytes, ctx_.stream), "cudaMemsetAsync");
      check(cudnnRNNBackwardWeights_v8(ctx_.cudnn, rnn_, CUDNN_WGRAD_MODE_ADD, lens(), x_desc_, x, state_, hx, y_desc_,
                                       y, weights_.bytes, dweights, work_.cudnn_bytes, cudnn_space(ws),
                                       kept_.reserve_bytes, k + kept_.reserve),
            "cudnnRNNBackwardWeights_v8");
      float* const d_weights[kLstmB + 1] = {nullptr, args.d_inputs[kLstmW], args.d_inputs[kLstmR],
                                            has_.b ? args.d_inputs[kLstmB] : nullptr};
      copier_.unpack(dweights, d_weights);
    }
  }

 private:
  void plan_memory() {
    size_t reserve = 0;
    check(cudnnGetRNNTempSpaceSizes(ctx_.cudnn, rnn_, CUDNN_FWD_MODE_TRAINING, x_desc_, &work_.cudnn_bytes, &reserve),
          "cudnnGetRNNTempSpaceSizes");
    const size_t state_bytes = static_cast<size_t>(d_.num_dir * d_.batch * d_.hidden) * sizeof(float);
    const size_t x_bytes = static_cast<size_t>(d_.seq * d_.batch * d_.input) * sizeof(float);
    const bool t = states_transposed();
    WorkspaceCarver ws;
    work_.cudnn = ws.part(work_.cudnn_bytes);
    work_.x = ws.part(reversed() ? x_bytes : 0);
    work_.dy = ws.part(y_bytes());
    work_.dx = ws.part(x_bytes);
    work_.hx = ws.part(t && has_.initial_h ? state_bytes : 0);
    work_.cx = ws.part(t && has_.initial_c ? state_bytes : 0);
    work_.hy = ws.part(t && has_.y_h ? state_bytes : 0);
    work_.cy = ws.part(t && has_.y_c ? state_bytes : 0);
    work_.dhy = ws.part(t && has_.y_h ? state_bytes : 0);
    work_.dcy = ws.part(t && has_.y_c ? state_bytes : 0);
    work_.dhx = ws.part(t && has_.initial_h ? state_bytes : 0);
    work_.dcx = ws.part(t && has_.initial_c ? state_bytes : 0);
    work_.dweights = ws.part(weights_.bytes);
    work_.total = ws.total();
    WorkspaceCarver kept;
    kept_.reserve_bytes = reserve;
    kept_.reserve = kept.part(reserve);
    kept_.weights = kept.part(weights_.bytes);
    kept_.y = kept.part(y_kept() ? y_bytes() : 0);
    kept_.total = kept.total();
  }

  size_t y_bytes() const { return static_cast<size_t>(d_.seq * d_.batch * d_.num_dir * d_.hidden) * sizeof(float); }
  const int32_t* lens() const { return static_cast<const int32_t*>(lens_.get()); }
  void* cudnn_space(uint8_t* ws) const { return work_.cudnn_bytes ? ws + work_.cudnn : nullptr; }

  // X as cuDNN runs it: reversed in time into the workspace for direction "reverse" (again in the
  // backward: a cheap gather, where keeping it would cost a copy of X per step).
  const void* cudnn_x(const void* const* inputs, uint8_t* ws) const {
    if (!reversed()) return inputs[kLstmX];
    launch_reverse_sequences(inputs[kLstmX], ws + work_.x, sizeof(float), lens(),
                             SequenceDims{d_.seq, d_.batch, d_.input, batch_major()}, ctx_.stream);
    return ws + work_.x;
  }

  // A state (initial_h/c, or dY_h/dY_c) as cuDNN wants it ([D, batch, H]), or nullptr (zeros).
  template <class Ptr>
  const void* state_in(const Ptr* pointers, size_t index, bool present, uint8_t* scratch) const {
    if (!present) return nullptr;
    const void* state = pointers[index];
    if (!states_transposed()) return state;
    state_to_cudnn(d_, state, scratch, sizeof(float), ctx_.stream);
    return scratch;
  }

  const CudaContext& ctx_;
  LstmAttributes attrs_;
  LstmDims d_;
  LstmGradPresence has_;
  DropoutDescriptor dropout_;
  RnnDescriptor rnn_;
  TensorDescriptor state_;  // [D, batch, H]: hx, cx, hy, cy and their gradients
  RnnDataDescriptor x_desc_, y_desc_;
  LstmWeightLayout weights_;
  WeightCopier copier_;
  DeviceMemory lens_;  // [batch] int32, every entry seq
  WorkParts work_;
  KeptParts kept_;
};

GradChoice plan_lstm_grad(const GradRequest& r) {
  const CudaContext& ctx = cuda_context_of(r);
  const LstmAttributes attrs = parse_lstm_attributes(r.node);
  // Clip, input_forget and sequence_lens were refused by OpDef::untrainable (ops/lstm.cc).
  auto in = [&](size_t i) { return i < r.inputs.size() && r.inputs[i].present; };
  if (in(kLstmP) && r.needs_grad[kLstmP]) {
    node_fail<UnsupportedModelError>(r.node, "training peepholes (input P) is not supported on CUDA: cuDNN's LSTM "
                                             "has none (train this model with device='cpu')");
  }
  const LstmDims d = lstm_dims(r.node, attrs, r.inputs);
  for (int64_t n : {d.seq * d.batch * d.input, d.seq * d.batch * d.num_dir * d.hidden, 4 * d.hidden * d.input}) {
    if (n > INT_MAX) node_fail<UnsupportedModelError>(r.node, "tensors of more than 2^31-1 elements are not supported");
  }
  auto out = [&](size_t o) { return o < r.outputs.size() && r.node.has_output(o); };
  LstmGradPresence has;
  has.b = in(kLstmB);
  has.initial_h = in(kLstmInitialH);
  has.initial_c = in(kLstmInitialC);
  has.y = out(kLstmY);
  has.y_h = out(kLstmYH);
  has.y_c = out(kLstmYC);
  if (d.batch == 0 || d.seq == 0 || d.input == 0) {
    return zero_grad_choice(ctx, r, "zeros (empty sequence, batch or input)");
  }
  // The forward kernel's math: fp32 FMA only; tf32 cuDNN's default math (TF32 permitted).
  const cudnnMathType_t math = ctx.options.precision == Precision::Tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  auto kernel = std::make_unique<LstmTrainKernel>(ctx, attrs, d, has, math);
  std::string steps;
  if (kernel->reversed()) steps += ", sequences reversed by kernel";
  if (has.y && d.num_dir == 2 && !kernel->batch_major()) steps += ", Y transposed";
  if (kernel->states_transposed()) steps += ", states transposed";
  const std::string math_name =
      math == CUDNN_FMA_MATH ? "fp32 (CUDNN_FMA_MATH)" : "tf32 permitted (CUDNN_DEFAULT_MATH)";
  GradChoice choice;
  choice.algorithm = "cudnnRNNBackwardData_v8 + cudnnRNNBackwardWeights_v8 on the forward's reserve space (" +
                     math_name + steps + ")";
  choice.runs_forward = true;
  choice.forward_algorithm = "cudnnRNNForward (training: reserve space kept for backward, weights packed per step" +
                             steps + ")";
  choice.workspace_bytes = kernel->workspace_bytes();
  choice.kept_bytes = kernel->kept_bytes();
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace

void register_cuda_lstm_grad_kernels(KernelRegistry& r, const CudaContext&) { r.at("LSTM").with_gradient(plan_lstm_grad); }

}  // namespace dnnx::cuda
