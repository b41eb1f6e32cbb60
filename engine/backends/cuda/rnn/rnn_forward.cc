#include "backends/cuda/rnn/rnn_forward.h"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/rnn/rnn_kernels.h"
#include "backends/cuda/rnn/rnn_layouts.h"
#include "backends/cuda/rnn/rnn_weights.h"
#include "backends/cuda/runtime/workspace_carver.h"

namespace dnnx::cuda {

namespace {

// The workspace, part by part (byte offsets; a part not needed has size 0).
struct WorkspaceParts {
  size_t cudnn = 0, cudnn_bytes = 0;      // cuDNN's own
  size_t x_reversed = 0;                  // [seq, batch, I] or [batch, seq, I]: reverse only
  size_t y_cudnn = 0;                     // cuDNN's Y, where it is not ONNX's Y as it is
  size_t hx = 0, cx = 0, hy = 0, cy = 0;  // [D, batch, H]: layout 1 with D = 2 only
  size_t weights = 0;                     // the weight space, when W, R, B are not constants
  size_t lens = 0;                        // [batch] int32, when the lengths are a graph input
  size_t total = 0;
};

// The lengths of one run: host copies for the data descriptors, the device array cuDNN and
// the reverse kernel read (zeros raised to 1), and whether any was 0.
struct Lengths {
  std::vector<int> host;
  const int32_t* device = nullptr;
  bool any_empty = false;
};

// Validates lengths (each in [0, seq]) and raises zeros to 1 for cuDNN.
bool clamp_lengths(std::vector<int>& lens, int64_t seq, const std::string& where, bool input) {
  bool any_empty = false;
  for (size_t b = 0; b < lens.size(); ++b) {
    if (lens[b] < 0 || lens[b] > seq) {
      const std::string message = where + ": sequence_lens[" + std::to_string(b) + "] is " + std::to_string(lens[b]) +
                                  ", expected a value in [0, " + std::to_string(seq) + "]";
      if (input) throw InputError(message);
      throw InvalidModelError(message);
    }
    if (lens[b] == 0) {
      lens[b] = 1;
      any_empty = true;
    }
  }
  return any_empty;
}

class RnnKernel final : public Kernel {
 public:
  RnnKernel(const CudaContext& ctx, std::string where, const RnnNode& node, DType dtype)
      : ctx_(ctx), where_(std::move(where)), cell_(node.cell), form_(node.form), d_(node.dims), has_(node.has),
        dtype_(dtype), elem_(dtype_size(dtype)) {}

  // The descriptors and the weight layout (before any length is known).
  void set_up(cudnnMathType_t math) {
    set_rnn_descriptor(ctx_, cell_, d_, math, rnn_, dropout_, data_type());
    const int dims[3] = {static_cast<int>(d_.num_dir), static_cast<int>(d_.batch), static_cast<int>(d_.hidden)};
    const int strides[3] = {dims[1] * dims[2], dims[2], 1};
    check(cudnnSetTensorNdDescriptor(state_, data_type(), 3, dims, strides), "cudnnSetTensorNdDescriptor");
    weights_ = rnn_weight_layout(ctx_, rnn_, cell_, d_, has_.b, elem_);
  }

  // Packs constant weights into a weight space of the kernel's own.
  void pack_constant_weights(const void* const host[]) {
    packed_weights_ = device_alloc(ctx_, weights_.bytes, "cudaMalloc (RNN weights)");
    pack_weights_from_host(ctx_, weights_, host, packed_weights_.get());
  }

  // Weights that are graph inputs: packed into the workspace on every run.
  void pack_weights_per_run() { copier_ = WeightCopier(ctx_, weights_); }

  // Fixes the lengths at plan time: all seq, or a constant sequence_lens.
  void fix_lengths(std::vector<int> lens) {
    fixed_.emplace();
    fixed_->any_empty = clamp_lengths(lens, d_.seq, where_, false);
    fixed_->host = std::move(lens);
    fixed_lens_ = device_alloc(ctx_, fixed_->host.size() * sizeof(int32_t), "cudaMalloc (RNN lengths)");
    check(cudaMemcpyAsync(fixed_lens_.get(), fixed_->host.data(), fixed_->host.size() * sizeof(int32_t),
                          cudaMemcpyHostToDevice, ctx_.stream),
          "cudaMemcpyAsync (RNN lengths)");
    check(cudaStreamSynchronize(ctx_.stream), "cudaStreamSynchronize");
    fixed_->device = static_cast<const int32_t*>(fixed_lens_.get());
    set_data(x_fixed_, y_fixed_, fixed_->host);
  }

  // Lays out the workspace; cuDNN's part is asked with full-length sequences (its size depends
  // on the longest sequence and the batch, not on each length).
  size_t plan_workspace() {
    std::vector<int> full(static_cast<size_t>(d_.batch), static_cast<int>(d_.seq));
    RnnDataDescriptor x, y;
    set_data(x, y, full);
    size_t reserve = 0;
    check(cudnnGetRNNTempSpaceSizes(ctx_.cudnn, rnn_, CUDNN_FWD_MODE_INFERENCE, x, &parts_.cudnn_bytes, &reserve),
          "cudnnGetRNNTempSpaceSizes");
    const size_t f = elem_;
    const size_t state_bytes = static_cast<size_t>(d_.num_dir * d_.batch * d_.hidden) * f;
    WorkspaceCarver ws;
    parts_.cudnn = ws.part(parts_.cudnn_bytes);
    parts_.x_reversed = ws.part(reversed() ? static_cast<size_t>(d_.seq * d_.batch * d_.input) * f : 0);
    parts_.y_cudnn = ws.part(y_staged() ? static_cast<size_t>(d_.seq * d_.batch * d_.num_dir * d_.hidden) * f : 0);
    parts_.hx = ws.part(states_transposed() && has_.initial_h ? state_bytes : 0);
    parts_.cx = ws.part(states_transposed() && has_.initial_c ? state_bytes : 0);
    parts_.hy = ws.part(states_transposed() && has_.y_h ? state_bytes : 0);
    parts_.cy = ws.part(states_transposed() && has_.y_c ? state_bytes : 0);
    parts_.weights = ws.part(packed_weights_ ? 0 : weights_.bytes);
    parts_.lens = ws.part(fixed_ ? 0 : static_cast<size_t>(d_.batch) * sizeof(int32_t));
    parts_.total = ws.total();
    return parts_.total;
  }

  bool reversed() const { return form_.reversed(); }
  bool batch_major() const { return form_.batch_major(); }
  // cuDNN's Y goes to the workspace unless it is ONNX's Y byte for byte.
  bool y_staged() const { return !has_.y || y_differs(form_, d_); }
  bool states_transposed() const { return batch_major() && d_.num_dir == 2; }

  // x [seq, batch, I] (layout 0) or [batch, seq, I] (layout 1); outputs as in ops/rnn/lstm_attrs.h
  // (GRU, RNN: ops/rnn/recurrent_attrs.h; no Y_c).
  void run(const KernelArgs& args) const override {
    if (d_.batch == 0) return;
    if (d_.seq == 0) {  // no step at all: Y is empty, Y_h and Y_c are zeros (as on the CPU)
      const size_t bytes = static_cast<size_t>(d_.num_dir * d_.batch * d_.hidden) * elem_;
      if (has_.y_h) check(cudaMemsetAsync(args.out<void>(kRnnYH), 0, bytes, ctx_.stream), "cudaMemsetAsync");
      if (has_.y_c) check(cudaMemsetAsync(args.out<void>(kRnnYC), 0, bytes, ctx_.stream), "cudaMemsetAsync");
      return;
    }
    auto* ws = static_cast<uint8_t*>(args.workspace);
    // Lengths read at run time come with data descriptors of this run's own.
    Lengths run_lens;
    std::optional<RnnDataDescriptor> x_run, y_run;
    if (!fixed_) {
      run_lens = read_lengths(args, ws + parts_.lens);
      x_run.emplace();
      y_run.emplace();
      set_data(*x_run, *y_run, run_lens.host);
    }
    const Lengths& lens = fixed_ ? *fixed_ : run_lens;
    const cudnnRNNDataDescriptor_t x_desc = fixed_ ? x_fixed_.get() : x_run->get();
    const cudnnRNNDataDescriptor_t y_desc = fixed_ ? y_fixed_.get() : y_run->get();

    const void* weights = packed_weights_.get();
    if (!weights) {
      copier_.pack(args.inputs, ws + parts_.weights);
      weights = ws + parts_.weights;
    }
    const SequenceDims x_dims{d_.seq, d_.batch, d_.input, batch_major()};
    const void* x = args.in<void>(kRnnX);
    if (reversed()) {
      void* x_rev = ws + parts_.x_reversed;
      launch_reverse_sequences(x, x_rev, elem_, lens.device, x_dims, ctx_.stream);
      x = x_rev;
    }
    const void* hx = state_in(args, kRnnInitialH, has_.initial_h, ws + parts_.hx);
    const void* cx = state_in(args, kRnnInitialC, has_.initial_c, ws + parts_.cx);
    void* y = y_staged() ? ws + parts_.y_cudnn : args.out<void>(kRnnY);
    void* hy = has_.y_h ? (states_transposed() ? ws + parts_.hy : args.out<void>(kRnnYH)) : nullptr;
    void* cy = has_.y_c ? (states_transposed() ? ws + parts_.cy : args.out<void>(kRnnYC)) : nullptr;

    check(cudnnRNNForward(ctx_.cudnn, rnn_, CUDNN_FWD_MODE_INFERENCE, lens.device, x_desc, x, y_desc, y, state_, hx,
                          hy, state_, cx, cy, weights_.bytes, weights, parts_.cudnn_bytes,
                          parts_.cudnn_bytes ? ws + parts_.cudnn : nullptr, 0, nullptr),
          "cudnnRNNForward");

    if (has_.y && y_staged()) y_from_cudnn(form_, d_, y, lens.device, args.out<void>(kRnnY), elem_, ctx_.stream);
    if (has_.y_h && states_transposed()) state_out(hy, args.out<void>(kRnnYH));
    if (has_.y_c && states_transposed()) state_out(cy, args.out<void>(kRnnYC));
    if (lens.any_empty) zero_empty(args);
  }

 private:
  cudnnDataType_t data_type() const { return dtype_ == DType::Float16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT; }

  // The data descriptors of x [.., I] and y [.., D*H] for these lengths; padding in y is 0.
  void set_data(const RnnDataDescriptor& x, const RnnDataDescriptor& y, const std::vector<int>& lens) const {
    const cudnnRNNDataLayout_t layout =
        batch_major() ? CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED : CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED;
    double fill = 0.0;  // read as the data type: zero bits are 0 in float and half alike
    check(cudnnSetRNNDataDescriptor(x, data_type(), layout, static_cast<int>(d_.seq), static_cast<int>(d_.batch),
                                    static_cast<int>(d_.input), lens.data(), &fill),
          "cudnnSetRNNDataDescriptor (x)");
    check(cudnnSetRNNDataDescriptor(y, data_type(), layout, static_cast<int>(d_.seq), static_cast<int>(d_.batch),
                                    static_cast<int>(d_.num_dir * d_.hidden), lens.data(), &fill),
          "cudnnSetRNNDataDescriptor (y)");
  }

  // sequence_lens as a graph input: read back (the stream waits), checked, raised to 1 where 0
  // and put into the workspace for cuDNN and the reverse kernel.
  Lengths read_lengths(const KernelArgs& args, uint8_t* device_copy) const {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    check(cudaStreamIsCapturing(ctx_.stream, &capture), "cudaStreamIsCapturing");
    if (capture != cudaStreamCaptureStatusNone) {
      throw DeviceError(std::string(cell_.name == std::string("GRU") ? "a " : "an ") + cell_.name +
                        " whose sequence_lens is a graph input reads the lengths back on every run, which a CUDA graph "
                        "cannot record");
    }
    Lengths lens;
    lens.host.resize(static_cast<size_t>(d_.batch));
    const size_t bytes = lens.host.size() * sizeof(int32_t);
    check(cudaMemcpyAsync(lens.host.data(), args.in<int32_t>(kRnnSequenceLens), bytes, cudaMemcpyDeviceToHost,
                          ctx_.stream),
          "cudaMemcpyAsync (sequence_lens)");
    check(cudaStreamSynchronize(ctx_.stream), "cudaStreamSynchronize");
    lens.any_empty = clamp_lengths(lens.host, d_.seq, where_, true);
    // From pageable memory the copy has left `lens.host` when the call returns.
    check(cudaMemcpyAsync(device_copy, lens.host.data(), bytes, cudaMemcpyHostToDevice, ctx_.stream),
          "cudaMemcpyAsync (sequence_lens)");
    lens.device = reinterpret_cast<const int32_t*>(device_copy);
    return lens;
  }

  // initial_h/c as cuDNN wants it ([D, batch, H]), or nullptr for zeros.
  const void* state_in(const KernelArgs& args, size_t input, bool present, uint8_t* scratch) const {
    if (!present) return nullptr;
    if (!states_transposed()) return args.in<void>(input);
    state_to_cudnn(d_, args.in<void>(input), scratch, elem_, ctx_.stream);
    return scratch;
  }

  // Y_h/Y_c [D, batch, H] -> ONNX's layout-1 [batch, D, H].
  void state_out(const void* state, void* out) const { state_from_cudnn(d_, state, out, elem_, ctx_.stream); }

  // Zeroes every output of the batch entries whose length is 0 (they ran as 1 step). The
  // original lengths are the node's input, on the device.
  void zero_empty(const KernelArgs& args) const {
    const int32_t* lens = args.in<int32_t>(kRnnSequenceLens);
    const int64_t h = d_.hidden, nd = d_.num_dir;
    if (has_.y) {
      // Y [seq, D, batch, H]: one entry's run is H; [batch, seq, D, H]: seq * D * H.
      launch_zero_empty_sequences(args.out<void>(kRnnY), elem_, d_.seq * nd * d_.batch * h,
                                  batch_major() ? d_.seq * nd * h : h, d_.batch, lens, ctx_.stream);
    }
    const int64_t state_inner = batch_major() ? nd * h : h;  // [batch, D, H] or [D, batch, H]
    for (size_t o : {size_t{kRnnYH}, size_t{kRnnYC}}) {
      if (o == kRnnYH ? has_.y_h : has_.y_c) {
        launch_zero_empty_sequences(args.out<void>(o), elem_, nd * d_.batch * h, state_inner, d_.batch, lens,
                                    ctx_.stream);
      }
    }
  }

  const CudaContext& ctx_;
  std::string where_;  // for errors about sequence_lens, found only at run time
  CudnnCell cell_;
  RnnForm form_;
  LstmDims d_;
  RnnPresence has_;
  DType dtype_;   // of X, W, R, B, the states and Y: float32, or float16
  size_t elem_;   // its size in bytes
  DropoutDescriptor dropout_;  // no dropout: one layer (cuDNN applies it between layers only)
  RnnDescriptor rnn_;
  TensorDescriptor state_;  // [D, batch, H], for hx, cx, hy, cy
  RnnWeightLayout weights_;
  DeviceMemory packed_weights_;  // constant W, R, B packed at plan time; null otherwise
  WeightCopier copier_;          // otherwise: W, R, B packed on every run
  std::optional<Lengths> fixed_;  // the lengths, when known at plan time
  DeviceMemory fixed_lens_;
  RnnDataDescriptor x_fixed_, y_fixed_;
  WorkspaceParts parts_;
};

}  // namespace

KernelChoice plan_rnn_forward(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                              const RnnNode& rnn) {
  const LstmDims& d = rnn.dims;
  const RnnPresence& has = rnn.has;
  check_rnn_sizes(node, rnn.cell, d);
  if (d.input == 0) node_fail<UnsupportedModelError>(node, "input size 0 is not supported on CUDA");
  const DType dtype = inputs[kRnnX].info.dtype;
  if (dtype != DType::Float32 && dtype != DType::Float16) {  // kFloatAndFloat16: bf16 keeps RNNs in float32
    node_fail<UnsupportedModelError>(node, std::string("cuDNN's RNNs take float32 or float16 data, not ") +
                                               dtype_name(dtype));
  }
  const cudnnMathType_t math = rnn_math(ctx, dtype == DType::Float16);
  auto kernel = std::make_unique<RnnKernel>(ctx, node.where(), rnn, dtype);
  KernelChoice choice;
  if (d.batch > 0 && d.seq > 0) {
    kernel->set_up(math);
    const bool constant_weights = inputs[kRnnW].constant && inputs[kRnnR].constant &&
                                  (!has.b || inputs[kRnnB].constant);
    if (constant_weights) {
      const void* host[kRnnB + 1] = {nullptr, inputs[kRnnW].constant->data.data(),
                                     inputs[kRnnR].constant->data.data(),
                                     has.b ? inputs[kRnnB].constant->data.data() : nullptr};
      kernel->pack_constant_weights(host);
    } else {
      kernel->pack_weights_per_run();
    }
    if (!has.sequence_lens || inputs[kRnnSequenceLens].constant) {
      std::vector<int> lens(static_cast<size_t>(d.batch), static_cast<int>(d.seq));
      if (has.sequence_lens) {
        const int32_t* c = inputs[kRnnSequenceLens].constant->as<int32_t>();
        std::copy(c, c + d.batch, lens.begin());
      }
      kernel->fix_lengths(std::move(lens));
    }
    choice.workspace_bytes = kernel->plan_workspace();
    std::string steps;
    if (!constant_weights) steps += ", weights packed per run";
    if (has.sequence_lens && !inputs[kRnnSequenceLens].constant) steps += ", lengths read per run";
    if (kernel->reversed()) steps += ", sequences reversed by kernel";
    if (has.y && d.num_dir == 2 && !kernel->batch_major()) steps += ", Y transposed";
    if (kernel->states_transposed()) steps += ", states transposed";
    choice.algorithm = "cudnnRNNForward (CUDNN_RNN_ALGO_STANDARD" + steps + ")";
  } else {
    choice.algorithm = "none (empty sequence or batch)";
  }
  choice.math = rnn_math_name(math);
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace dnnx::cuda
