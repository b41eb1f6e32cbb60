// LSTM's gradient on cuDNN (cudnnRNNBackwardData_v8 + cudnnRNNBackwardWeights_v8), for every
// direction and layout the CPU gradient takes (lstm_grad_cpu.cc), bridged to ONNX as the forward
// kernel is (lstm_cuda.cc: weight layout, "reverse" by reversing the sequences, layout-0
// bidirectional Y and layout-1 bidirectional states transposed).
//
// Note [LSTM backward recomputes its forward]: cuDNN's backward needs the reserve space of a
// forward run in CUDNN_FWD_MODE_TRAINING, but the trainer keeps only the forward's outputs (the
// inference kernel keeps nothing). So the gradient kernel runs the forward again, in training
// mode, into its own workspace (which holds the reserve space, cuDNN's Y and the packed weights),
// then the two backward calls on that reserve space. One extra forward per step, as the CPU
// gradient does too; the reserve space lives only for the step.
//
// Per run: pack W, R, B (device) into the weight space; forward (training) -> Y, reserve; dY
// (zeros where no gradient reaches Y), dY_h, dY_c to cuDNN's layouts; BackwardData -> dX, dh0,
// dc0; BackwardWeights adds into the zeroed dweight space -> unpacked to dW, dR, dB (gate order
// i, o, f, c). Refused at plan time: clip, input_forget, sequence_lens (as on the CPU) and
// peepholes (cuDNN's LSTM has none).
#include <algorithm>
#include <climits>
#include <initializer_list>
#include <utility>

#include "backends/cuda/glue_kernels.h"
#include "backends/cuda/layer_grad_kernels.h"
#include "backends/cuda/lstm_layouts.h"
#include "backends/cuda/lstm_weights.h"
#include "backends/cuda/rnn_kernels.h"
#include "backends/cuda/workspace_carver.h"
#include "backends/cuda/zero_grad_kernel.h"
#include "ops/lstm_attrs.h"

namespace dnnx::cuda {

namespace {

// Which optional inputs and outputs the node has (the call's pointer arrays are only as long as
// the node's lists).
struct LstmGradPresence {
  bool b = false, initial_h = false, initial_c = false;
  bool y = false, y_h = false, y_c = false;
};

// The workspace, part by part (byte offsets; a part not needed has size 0).
struct Parts {
  size_t cudnn = 0, cudnn_bytes = 0;      // cuDNN's work space (training mode)
  size_t reserve = 0, reserve_bytes = 0;  // the forward's reserve space, read by both backward calls
  size_t weights = 0, dweights = 0;       // the weight space and its gradient
  size_t x = 0;                           // X reversed (reverse only)
  size_t y = 0, dy = 0, dx = 0;           // cuDNN's Y, dY and dX [seq, batch, D*H or I]
  size_t hx = 0, cx = 0, dhy = 0, dcy = 0, dhx = 0, dcx = 0;  // [D, batch, H]: layout 1, D = 2
  size_t total = 0;
};

class LstmGradKernel final : public GradKernel {
 public:
  LstmGradKernel(const CudaContext& ctx, const LstmAttributes& attrs, const LstmDims& d, const LstmGradPresence& has,
                 cudnnMathType_t math)
      : ctx_(ctx), attrs_(attrs), d_(d), has_(has) {
    set_lstm_descriptor(ctx_, d_, math, rnn_, dropout_);
    const int dims[3] = {static_cast<int>(d_.num_dir), static_cast<int>(d_.batch), static_cast<int>(d_.hidden)};
    const int strides[3] = {dims[1] * dims[2], dims[2], 1};
    check(cudnnSetTensorNdDescriptor(state_, CUDNN_DATA_FLOAT, 3, dims, strides), "cudnnSetTensorNdDescriptor");
    weights_ = lstm_weight_layout(ctx_, rnn_, d_, has_.b);
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
    plan_workspace();
  }

  size_t workspace_bytes() const { return parts_.total; }
  bool reversed() const { return attrs_.direction == LstmDirection::Reverse; }
  bool batch_major() const { return attrs_.layout == RnnLayout::BatchMajor; }
  bool states_transposed() const { return batch_major() && d_.num_dir == 2; }
  // ONNX's Y (and dY) differs from cuDNN's: layout 0 with two directions.
  bool y_transposed() const { return d_.num_dir == 2 && !batch_major(); }

  void run(const GradArgs& args) const override {
    auto* ws = static_cast<uint8_t*>(args.workspace);
    auto at = [ws](size_t offset) { return reinterpret_cast<float*>(ws + offset); };
    const auto* lens = static_cast<const int32_t*>(lens_.get());
    const SequenceDims x_dims{d_.seq, d_.batch, d_.input, batch_major()};
    const SequenceDims y_dims{d_.seq, d_.batch, d_.num_dir * d_.hidden, batch_major()};

    pack_weights_on_device(ctx_, weights_, args.inputs, ws + parts_.weights);
    const float* x = args.in(kLstmX);
    if (reversed()) {
      launch_reverse_sequences(x, at(parts_.x), lens, x_dims, ctx_.stream);
      x = at(parts_.x);
    }
    const float* hx = state_in(args.inputs, kLstmInitialH, has_.initial_h, at(parts_.hx));
    const float* cx = state_in(args.inputs, kLstmInitialC, has_.initial_c, at(parts_.cx));
    float* y = at(parts_.y);
    check(cudnnRNNForward(ctx_.cudnn, rnn_, CUDNN_FWD_MODE_TRAINING, lens, x_desc_, x, y_desc_, y, state_, hx, nullptr,
                          state_, cx, nullptr, weights_.bytes, ws + parts_.weights, parts_.cudnn_bytes,
                          cudnn_space(ws), parts_.reserve_bytes, ws + parts_.reserve),
          "cudnnRNNForward (training, for the gradient)");

    // dY in cuDNN's layout: zeros where no gradient reaches Y.
    float* dy = at(parts_.dy);
    const float* onnx_dy = has_.y ? args.d_outputs[kLstmY] : nullptr;
    const int64_t y_count = d_.seq * d_.batch * d_.num_dir * d_.hidden;
    if (!onnx_dy) {
      check(cudaMemsetAsync(dy, 0, static_cast<size_t>(y_count) * sizeof(float), ctx_.stream), "cudaMemsetAsync");
    } else if (reversed()) {
      launch_reverse_sequences(onnx_dy, dy, lens, y_dims, ctx_.stream);
    } else if (y_transposed()) {  // [seq, D, batch, H] -> [seq, batch, D, H]
      const int64_t h = d_.hidden, nd = d_.num_dir;
      launch_gather(onnx_dy, dy, sizeof(float), y_count,
                    walk({{d_.seq, nd * d_.batch * h}, {d_.batch, h}, {nd, d_.batch * h}, {h, 1}}), ctx_.stream);
    } else {
      check(cudaMemcpyAsync(dy, onnx_dy, static_cast<size_t>(y_count) * sizeof(float), cudaMemcpyDeviceToDevice,
                            ctx_.stream),
            "cudaMemcpyAsync");
    }
    const float* dhy = has_.y_h ? state_in(args.d_outputs, kLstmYH, args.d_outputs[kLstmYH] != nullptr,
                                           at(parts_.dhy))
                                : nullptr;
    const float* dcy = has_.y_c ? state_in(args.d_outputs, kLstmYC, args.d_outputs[kLstmYC] != nullptr,
                                           at(parts_.dcy))
                                : nullptr;

    // dX: straight into ONNX's dX where the layouts agree, else through the workspace.
    float* onnx_dx = args.d_inputs[kLstmX];
    float* dx = onnx_dx && !reversed() ? onnx_dx : at(parts_.dx);
    float* onnx_dhx = has_.initial_h ? args.d_inputs[kLstmInitialH] : nullptr;
    float* onnx_dcx = has_.initial_c ? args.d_inputs[kLstmInitialC] : nullptr;
    float* dhx = onnx_dhx && states_transposed() ? at(parts_.dhx) : onnx_dhx;
    float* dcx = onnx_dcx && states_transposed() ? at(parts_.dcx) : onnx_dcx;
    check(cudnnRNNBackwardData_v8(ctx_.cudnn, rnn_, lens, y_desc_, y, dy, x_desc_, dx, state_, hx, dhy, dhx, state_,
                                  cx, dcy, dcx, weights_.bytes, ws + parts_.weights, parts_.cudnn_bytes,
                                  cudnn_space(ws), parts_.reserve_bytes, ws + parts_.reserve),
          "cudnnRNNBackwardData_v8");
    if (onnx_dx && reversed()) launch_reverse_sequences(dx, onnx_dx, lens, x_dims, ctx_.stream);
    if (onnx_dhx && states_transposed()) state_out(dhx, onnx_dhx);
    if (onnx_dcx && states_transposed()) state_out(dcx, onnx_dcx);

    if (args.d_inputs[kLstmW] || args.d_inputs[kLstmR] || (has_.b && args.d_inputs[kLstmB])) {
      // cuDNN only adds weight gradients (CUDNN_WGRAD_MODE_ADD): start from zeros.
      check(cudaMemsetAsync(ws + parts_.dweights, 0, weights_.bytes, ctx_.stream), "cudaMemsetAsync");
      check(cudnnRNNBackwardWeights_v8(ctx_.cudnn, rnn_, CUDNN_WGRAD_MODE_ADD, lens, x_desc_, x, state_, hx, y_desc_,
                                       y, weights_.bytes, ws + parts_.dweights, parts_.cudnn_bytes, cudnn_space(ws),
                                       parts_.reserve_bytes, ws + parts_.reserve),
            "cudnnRNNBackwardWeights_v8");
      float* const d_weights[kLstmB + 1] = {nullptr, args.d_inputs[kLstmW], args.d_inputs[kLstmR],
                                            has_.b ? args.d_inputs[kLstmB] : nullptr};
      unpack_weights_on_device(ctx_, weights_, ws + parts_.dweights, d_weights);
    }
  }

 private:
  void plan_workspace() {
    size_t reserve = 0;
    check(cudnnGetRNNTempSpaceSizes(ctx_.cudnn, rnn_, CUDNN_FWD_MODE_TRAINING, x_desc_, &parts_.cudnn_bytes, &reserve),
          "cudnnGetRNNTempSpaceSizes");
    parts_.reserve_bytes = reserve;
    const size_t f = sizeof(float);
    const size_t state_bytes = static_cast<size_t>(d_.num_dir * d_.batch * d_.hidden) * f;
    const size_t x_bytes = static_cast<size_t>(d_.seq * d_.batch * d_.input) * f;
    const size_t y_bytes = static_cast<size_t>(d_.seq * d_.batch * d_.num_dir * d_.hidden) * f;
    WorkspaceCarver ws;
    parts_.cudnn = ws.part(parts_.cudnn_bytes);
    parts_.reserve = ws.part(parts_.reserve_bytes);
    parts_.weights = ws.part(weights_.bytes);
    parts_.dweights = ws.part(weights_.bytes);
    parts_.x = ws.part(reversed() ? x_bytes : 0);
    parts_.y = ws.part(y_bytes);
    parts_.dy = ws.part(y_bytes);
    parts_.dx = ws.part(x_bytes);  // also where dX goes when it is not asked for (cuDNN writes it anyway)
    const bool t = states_transposed();
    parts_.hx = ws.part(t && has_.initial_h ? state_bytes : 0);
    parts_.cx = ws.part(t && has_.initial_c ? state_bytes : 0);
    parts_.dhy = ws.part(t && has_.y_h ? state_bytes : 0);
    parts_.dcy = ws.part(t && has_.y_c ? state_bytes : 0);
    parts_.dhx = ws.part(t && has_.initial_h ? state_bytes : 0);
    parts_.dcx = ws.part(t && has_.initial_c ? state_bytes : 0);
    parts_.total = ws.total();
  }

  void* cudnn_space(uint8_t* ws) const { return parts_.cudnn_bytes ? ws + parts_.cudnn : nullptr; }

  // A state (initial_h/c, or dY_h/dY_c) as cuDNN wants it ([D, batch, H]), or nullptr (zeros).
  template <class Ptr>
  const float* state_in(const Ptr* pointers, size_t index, bool present, float* scratch) const {
    if (!present) return nullptr;
    const auto* state = static_cast<const float*>(pointers[index]);
    if (!states_transposed()) return state;
    state_to_cudnn(d_, state, scratch, sizeof(float), ctx_.stream);
    return scratch;
  }

  // [D, batch, H] -> ONNX's layout-1 [batch, D, H].
  void state_out(const float* state, float* out) const {
    state_from_cudnn(d_, state, out, sizeof(float), ctx_.stream);
  }

  const CudaContext& ctx_;
  LstmAttributes attrs_;
  LstmDims d_;
  LstmGradPresence has_;
  DropoutDescriptor dropout_;
  RnnDescriptor rnn_;
  TensorDescriptor state_;  // [D, batch, H]: hx, cx, dhy, dcy, dhx, dcx
  RnnDataDescriptor x_desc_, y_desc_;
  LstmWeightLayout weights_;
  DeviceMemory lens_;  // [batch] int32, every entry seq
  Parts parts_;
};

GradChoice plan_lstm_grad(const GradRequest& r) {
  const CudaContext& ctx = cuda_context_of(r);
  const LstmAttributes attrs = parse_lstm_attributes(r.node);
  if (attrs.has_clip) node_fail<UnsupportedModelError>(r.node, "training an LSTM with clip is not supported");
  if (attrs.input_forget) node_fail<UnsupportedModelError>(r.node, "training an LSTM with input_forget is not supported");
  auto in = [&](size_t i) { return i < r.inputs.size() && r.inputs[i].present; };
  if (in(kLstmSequenceLens)) {
    node_fail<UnsupportedModelError>(r.node, "training an LSTM with sequence_lens is not supported (pad the "
                                             "sequences to one length, or drop the input)");
  }
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
  GradChoice choice;
  // The forward kernel's math: fp32 FMA only; tf32 cuDNN's default math (TF32 permitted).
  const cudnnMathType_t math = ctx.options.precision == Precision::Tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  auto kernel = std::make_unique<LstmGradKernel>(ctx, attrs, d, has, math);
  std::string steps;
  if (kernel->reversed()) steps += ", sequences reversed by kernel";
  if (kernel->y_transposed()) steps += ", dY transposed";
  if (kernel->states_transposed()) steps += ", states transposed";
  choice.algorithm = "cudnnRNNForward (training) + cudnnRNNBackwardData_v8 + cudnnRNNBackwardWeights_v8 (" +
                     std::string(math == CUDNN_FMA_MATH ? "fp32 (CUDNN_FMA_MATH)" : "tf32 permitted (CUDNN_DEFAULT_MATH)") +
                     steps + ")";
  choice.workspace_bytes = kernel->workspace_bytes();
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace

void register_cuda_lstm_grad_kernels(GradRegistry& r) { r.add("LSTM", plan_lstm_grad); }

}  // namespace dnnx::cuda
