// The trainable tail of a model for one set of input shapes: its forward plan (the backend's
// kernels, as for inference), a buffer for every activation (kept for backward: no arena reuse
// here), and the backward schedule — the gradient kernels of the layers between the parameters
// and the loss, in reverse order, with a gradient buffer for every value on that path.
// Views (Reshape, Flatten, ...) share their source's activation and gradient buffers. Every
// buffer is in the backend's memory (train/train_buffer.h): on a device backend, forward and
// backward only queue work, so that a step can be recorded as one device graph. A layer whose
// gradient kernel runs the forward itself (cuDNN's LSTM: Note [training forward] in
// runtime/training.h) runs through that kernel, with memory kept for its backward; stacked LSTM
// layers are one layer here where the backend trains them as one (Note [stacked LSTMs in
// training] in train/tail_fusion.h).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/executor.h"
#include "runtime/planner.h"
#include "runtime/training.h"
#include "runtime/training.h"
#include "train/train_buffer.h"

namespace dnnx {

struct TailOptions {
  std::vector<std::string> params;  // the trainable constants
  std::string loss_value;           // the value the loss reads (the seed of backward)
  int skip_layer = -1;              // a layer fused into the loss, never run (the final Softmax)
  bool fuse_lstm_stacks = true;     // Note [stacked LSTMs in training]
  bool fuse_gemm_relu = true;       // Note [Gemm+Relu in training] in train/tail_fusion.h
};

// One layer's backward step.
struct GradStep {
  int layer = -1;                    // index into plan->layers
  std::unique_ptr<GradKernel> kernel;
  std::string algorithm;
  size_t workspace_bytes = 0;
  std::vector<int> d_inputs;         // per node input: the gradient root it feeds, -1 for none
  std::vector<bool> via_temp;        // per node input: written to scratch and added (fan-in)
  std::vector<size_t> temp_offsets;  // per node input: float offset in the scratch, when via_temp
  bool runs_forward = false;         // the kernel also runs the layer's forward (Note [training forward])
  size_t kept_offset = 0;            // bytes into the kept memory, when runs_forward
};

struct TailMemory {
  size_t activation_bytes = 0;  // every tail activation, kept for backward
  size_t gradient_bytes = 0;    // the gradient buffers (parameters included)
  size_t workspace_bytes = 0;   // forward and backward kernels' shared workspace, fan-in scratch
  size_t kept_bytes = 0;        // what gradient kernels keep from their forward (cuDNN's RNN reserve space)
};

class TailPlan {
 public:
  // UnsupportedModelError naming the first layer on the gradient path without a gradient kernel.
  // constants: the tail's constants in device memory (nullptr on a host backend); `ops` sums
  // the fan-in. Both must outlive the plan. The plan keeps its own copy of `tail` (with LSTM
  // stacks fused for these shapes), whose constants are the same tensors.
  TailPlan(const Graph& tail, const Backend& backend, const TrainingOps& ops,
           const DeviceConstants* constants, const std::vector<Shape>& input_shapes, const TailOptions& options);

  const Plan& plan() const { return *plan_; }
  // Runs every layer forward but the one fused into the loss (its output is read by nothing);
  // the tail's graph inputs are read in place from `inputs` (tail order, backend memory). A
  // layer whose gradient kernel runs its forward runs it here (in training mode, also for a
  // forward-only evaluation). With a timer: mark(i) before layer i, mark(layers) after the
  // last (as run_layers).
  void forward(const void* const* inputs, LayerTimer* timer = nullptr);
  // Runs the backward schedule; the loss value's gradient must be written first (seed()). With
  // a timer: mark(k) before step k, mark(steps) after the last.
  void backward(LayerTimer* timer = nullptr);

  int value_id(const std::string& name) const;
  const float* value(int id) const { return static_cast<const float*>(ptrs_[id]); }
  float* grad(int id) { return grad_ptr(id); }
  float* seed() { return grad_ptr(loss_value_); }
  int loss_value() const { return loss_value_; }
  int skip_layer() const { return skip_layer_; }  // among plan().layers; -1 for none
  TailMemory memory() const;
  // The backward schedule in run order: (layer name, op, algorithm), for plan().
  const std::vector<GradStep>& steps() const { return steps_; }

 private:
  float* grad_ptr(int id) { return grad_offset_[root_[id]] < 0 ? nullptr : grad_buf_ + grad_offset_[root_[id]]; }
  void place_activations();
  void schedule_backward(const Backend& backend, const TailOptions& options);
  void run_layer_forward(size_t l);
  uint8_t* kept(const GradStep& step) const { return step.runs_forward ? kept_.data() + step.kept_offset : nullptr; }

  const TrainingOps& ops_;
  const Backend& backend_;
  Graph graph_;  // the tail as planned (plan_'s layers point into it)
  std::shared_ptr<Plan> plan_;
  std::vector<int> root_;  // value id -> the value whose buffers it shares (itself unless a view)
  int loss_value_ = -1;
  int skip_layer_ = -1;  // options.skip_layer among the planned layers
  TrainBuffer activations_;
  std::vector<size_t> activation_offset_;  // per root arena value, bytes
  size_t activation_bytes_ = 0;
  TrainBuffer grads_;
  float* grad_buf_ = nullptr;
  std::vector<int64_t> grad_offset_;  // per root value, floats; -1 without a gradient
  size_t grad_floats_ = 0;
  TrainBuffer workspace_;
  size_t workspace_bytes_ = 0;
  TrainBuffer temp_;
  size_t temp_floats_ = 0;
  std::vector<GradStep> steps_;
  std::vector<int> forward_step_;  // per layer: the step whose kernel runs its forward, or -1
  TrainBuffer kept_;
  size_t kept_bytes_ = 0;
  std::vector<const void*> ptrs_;
  std::vector<const void*> call_in_;
  std::vector<void*> call_out_;
};

}  // namespace dnnx
