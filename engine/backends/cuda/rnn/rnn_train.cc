#include "backends/cuda/rnn/rnn_train.h"

#include <string>
#include <vector>

#include "backends/cuda/rnn/rnn_layouts.h"
#include "backends/cuda/rnn/rnn_weights.h"
#include "backends/cuda/runtime/workspace_carver.h"
#include "backends/cuda/train/zero_grad_kernel.h"

namespace dnnx::cuda {

namespace {

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

class RnnTrainKernel final : public GradKernel {
 public:
  RnnTrainKernel(const CudaContext& ctx, const RnnNode& node, cudnnMathType_t math)
      : ctx_(ctx), cell_(node.cell), form_(node.form), d_(node.dims), has_(node.has) {
    set_rnn_descriptor(ctx_, cell_, d_, math, rnn_, dropout_);
    const int dims[3] = {static_cast<int>(d_.num_dir), static_cast<int>(d_.batch), static_cast<int>(d_.hidden)};
    const int strides[3] = {dims[1] * dims[2], dims[2], 1};
    check(cudnnSetTensorNdDescriptor(state_, CUDNN_DATA_FLOAT, 3, dims, strides), "cudnnSetTensorNdDescriptor");
    weights_ = rnn_weight_layout(ctx_, rnn_, cell_, d_, has_.b);
    copier_ = WeightCopier(ctx_, weights_);
    // Every sequence is full length (sequence_lens is refused).
    const std::vector<int> lens(static_cast<size_t>(d_.batch), static_cast<int>(d_.seq));
    lens_ = device_alloc(ctx_, lens.size() * sizeof(int32_t), "cudaMalloc (RNN lengths)");
    check(cudaMemcpyAsync(lens_.get(), lens.data(), lens.size() * sizeof(int32_t), cudaMemcpyHostToDevice, ctx_.stream),
          "cudaMemcpyAsync (RNN lengths)");
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
  bool reversed() const { return form_.reversed(); }
  bool batch_major() const { return form_.batch_major(); }
  bool states_transposed() const { return batch_major() && d_.num_dir == 2; }
  // cuDNN's Y is kept apart from ONNX's Y unless it is ONNX's Y byte for byte.
  bool y_kept() const { return !has_.y || y_differs(form_, d_); }

  // X, W, R, B, (sequence_lens), initial_h, (initial_c) -> Y, Y_h, (Y_c) (ONNX layouts, lstm_attrs.h,
  // recurrent_attrs.h).
  void forward(const KernelArgs& args, void* kept) const override {
    auto* ws = static_cast<uint8_t*>(args.workspace);
    auto* k = static_cast<uint8_t*>(kept);
    copier_.pack(args.inputs, k + kept_.weights);
    const void* x = cudnn_x(args.inputs, ws);
    const void* hx = state_in(args.inputs, kRnnInitialH, has_.initial_h, ws + work_.hx);
    const void* cx = state_in(args.inputs, kRnnInitialC, has_.initial_c, ws + work_.cx);
    void* y = y_kept() ? k + kept_.y : args.out<void>(kRnnY);
    void* hy = has_.y_h ? (states_transposed() ? ws + work_.hy : args.out<void>(kRnnYH)) : nullptr;
    void* cy = has_.y_c ? (states_transposed() ? ws + work_.cy : args.out<void>(kRnnYC)) : nullptr;
    check(cudnnRNNForward(ctx_.cudnn, rnn_, CUDNN_FWD_MODE_TRAINING, lens(), x_desc_, x, y_desc_, y, state_, hx, hy,
                          state_, cx, cy, weights_.bytes, k + kept_.weights, work_.cudnn_bytes, cudnn_space(ws),
                          kept_.reserve_bytes, k + kept_.reserve),
          "cudnnRNNForward (training)");
    if (has_.y && y_kept()) y_from_cudnn(form_, d_, y, lens(), args.out<void>(kRnnY), sizeof(float), ctx_.stream);
    if (has_.y_h && states_transposed()) state_from_cudnn(d_, hy, args.out<void>(kRnnYH), sizeof(float), ctx_.stream);
    if (has_.y_c && states_transposed()) state_from_cudnn(d_, cy, args.out<void>(kRnnYC), sizeof(float), ctx_.stream);
  }

  void run(const GradArgs& args) const override {
    auto* ws = static_cast<uint8_t*>(args.workspace);
    auto* k = static_cast<uint8_t*>(args.kept);
    const void* x = cudnn_x(args.inputs, ws);
    const void* hx = state_in(args.inputs, kRnnInitialH, has_.initial_h, ws + work_.hx);
    const void* cx = state_in(args.inputs, kRnnInitialC, has_.initial_c, ws + work_.cx);
    const void* y = y_kept() ? k + kept_.y : args.outputs[kRnnY];
    const void* weights = k + kept_.weights;

    // dY in cuDNN's layout: zeros where no gradient reaches Y.
    const float* onnx_dy = has_.y ? args.d_outputs[kRnnY] : nullptr;
    const void* dy = onnx_dy;
    if (!onnx_dy) {
      check(cudaMemsetAsync(ws + work_.dy, 0, y_bytes(), ctx_.stream), "cudaMemsetAsync");
      dy = ws + work_.dy;
    } else if (y_differs(form_, d_)) {
      y_to_cudnn(form_, d_, onnx_dy, lens(), ws + work_.dy, sizeof(float), ctx_.stream);
      dy = ws + work_.dy;
    }
    const void* dhy = has_.y_h ? state_in(args.d_outputs, kRnnYH, args.d_outputs[kRnnYH] != nullptr,
                                          ws + work_.dhy)
                               : nullptr;
    const void* dcy = has_.y_c ? state_in(args.d_outputs, kRnnYC, args.d_outputs[kRnnYC] != nullptr,
                                          ws + work_.dcy)
                               : nullptr;

    // dX: straight into ONNX's dX where the layouts agree, else through the workspace (cuDNN
    // writes it even when it is not asked for).
    float* onnx_dx = args.d_inputs[kRnnX];
    void* dx = onnx_dx && !reversed() ? static_cast<void*>(onnx_dx) : ws + work_.dx;
    float* onnx_dhx = has_.initial_h ? args.d_inputs[kRnnInitialH] : nullptr;
    float* onnx_dcx = has_.initial_c ? args.d_inputs[kRnnInitialC] : nullptr;
    void* dhx = onnx_dhx && states_transposed() ? static_cast<void*>(ws + work_.dhx) : onnx_dhx;
    void* dcx = onnx_dcx && states_transposed() ? static_cast<void*>(ws + work_.dcx) : onnx_dcx;
    check(cudnnRNNBackwardData_v8(ctx_.cudnn, rnn_, lens(), y_desc_, y, dy, x_desc_, dx, state_, hx, dhy, dhx, state_,
                                  cx, dcy, dcx, weights_.bytes, weights, work_.cudnn_bytes, cudnn_space(ws),
                                  kept_.reserve_bytes, k + kept_.reserve),
          "cudnnRNNBackwardData_v8");
    if (onnx_dx && reversed()) {
      launch_reverse_sequences(dx, onnx_dx, sizeof(float), lens(),
                               SequenceDims{d_.seq, d_.batch, d_.input, batch_major()}, ctx_.stream);
    }
    if (onnx_dhx && states_transposed()) state_from_cudnn(d_, dhx, onnx_dhx, sizeof(float), ctx_.stream);
    if (onnx_dcx && states_transposed()) state_from_cudnn(d_, dcx, onnx_dcx, sizeof(float), ctx_.stream);

    if (args.d_inputs[kRnnW] || args.d_inputs[kRnnR] || (has_.b && args.d_inputs[kRnnB])) {
      // cuDNN adds weight gradients (CUDNN_WGRAD_MODE_ADD): start from zeros.
      void* dweights = ws + work_.dweights;
      check(cudaMemsetAsync(dweights, 0, weights_.bytes, ctx_.stream), "cudaMemsetAsync");
      check(cudnnRNNBackwardWeights_v8(ctx_.cudnn, rnn_, CUDNN_WGRAD_MODE_ADD, lens(), x_desc_, x, state_, hx, y_desc_,
                                       y, weights_.bytes, dweights, work_.cudnn_bytes, cudnn_space(ws),
                                       kept_.reserve_bytes, k + kept_.reserve),
            "cudnnRNNBackwardWeights_v8");
      float* const d_weights[kRnnB + 1] = {nullptr, args.d_inputs[kRnnW], args.d_inputs[kRnnR],
                                            has_.b ? args.d_inputs[kRnnB] : nullptr};
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
    if (!reversed()) return inputs[kRnnX];
    launch_reverse_sequences(inputs[kRnnX], ws + work_.x, sizeof(float), lens(),
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
  CudnnCell cell_;
  RnnForm form_;
  LstmDims d_;
  RnnPresence has_;
  DropoutDescriptor dropout_;
  RnnDescriptor rnn_;
  TensorDescriptor state_;  // [D, batch, H]: hx, cx, hy, cy and their gradients
  RnnDataDescriptor x_desc_, y_desc_;
  RnnWeightLayout weights_;
  WeightCopier copier_;
  DeviceMemory lens_;  // [batch] int32, every entry seq
  WorkParts work_;
  KeptParts kept_;
};

}  // namespace

GradChoice plan_rnn_train(const GradRequest& r, const RnnNode& rnn) {
  const CudaContext& ctx = cuda_context_of(r);
  const LstmDims& d = rnn.dims;
  check_rnn_sizes(r.node, rnn.cell, d);
  if (d.batch == 0 || d.seq == 0 || d.input == 0) {
    return zero_grad_choice(ctx, r, "zeros (empty sequence, batch or input)");
  }
  // The forward kernel's math: fp32 FMA only; tf32 cuDNN's default math (TF32 permitted).
  const cudnnMathType_t math = rnn_math(ctx, false);
  auto kernel = std::make_unique<RnnTrainKernel>(ctx, rnn, math);
  std::string steps;
  if (kernel->reversed()) steps += ", sequences reversed by kernel";
  if (rnn.has.y && d.num_dir == 2 && !kernel->batch_major()) steps += ", Y transposed";
  if (kernel->states_transposed()) steps += ", states transposed";
  GradChoice choice;
  choice.algorithm = "cudnnRNNBackwardData_v8 + cudnnRNNBackwardWeights_v8 on the forward's reserve space (" +
                     rnn_math_name(math) + steps + ")";
  choice.runs_forward = true;
  choice.forward_algorithm = "cudnnRNNForward (training: reserve space kept for backward, weights packed per step" +
                             steps + ")";
  choice.workspace_bytes = kernel->workspace_bytes();
  choice.kept_bytes = kernel->kept_bytes();
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace dnnx::cuda
