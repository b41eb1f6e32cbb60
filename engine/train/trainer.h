// Fine-tuning on any backend that has training ops (runtime/training.h): a frozen head (the
// layers before the first trainable one, planned by a plain inference Engine with passes on,
// keeping nothing for backward) feeds a trainable tail (TailPlan: activations kept, gradient
// kernels, no pass that changes a parameter, so that every parameter is the model's own
// initializer; only stacked LSTM layers become one node and Gemm -> Relu one Gemm+Relu, which
// read each layer's own initializers: train/tail_fusion.h, switched with the fuse_lstm_stack
// and fuse_gemm_relu passes). One step: head forward, tail forward, loss, backward over the
// tail only, the non-finite check, then SGD in place on the parameters.
//
// Note [training memory]: everything a step touches lives in the backend's memory (train/
// train_buffer.h): on CUDA the head's arena, the tail's activations and gradients, the
// parameters, the momentum buffers, the learning rate and the step's StepStats are device
// memory, and the head and the tail share one backend (one stream), so the head's outputs are
// read in place by the tail. Per step the batch and the targets are copied in once and the
// StepStats (loss, rows right, non-finite flag) copied back once. The parameters the user
// reads (weight(), velocity(), gradient()) are copied back on demand. On a device backend the
// whole step of one input shape is recorded as one device graph on its second step and
// replayed from then on (the learning rate is read from device memory, so a schedule does not
// invalidate it; Note [step io] in train/trainer_shape_plan.h); a new shape plans and records
// anew. One thread at a time.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/device_runner.h"
#include "runtime/engine.h"
#include "runtime/training.h"
#include "train/loss.h"
#include "train/sgd.h"
#include "train/split.h"
#include "train/tail_plan.h"

namespace dnnx {

class PartMarks;  // train/part_marks.h

struct TrainerOptions {
  std::vector<std::string> params;  // the trainable constants (train/trainable.h selects them)
  LossKind loss = LossKind::CrossEntropy;
  // loss "nll": the output already holds log-probabilities, whatever the last node (no Softmax
  // fused, no log-softmax taken): onnx's NegativeLogLikelihoodLoss with reduction "mean"
  bool scores_are_log_probs = false;
  SgdOptions sgd;
  PassOptions head_passes;          // the frozen head's rewrites (fuse_lstm_stack: the tail's too)
  bool device_graphs = true;        // on a device backend: replay each step as one recorded graph
};

// A step whose loss or gradients are not finite: the parameters are left as they were.
struct NonFiniteLossError : Error {
  using Error::Error;
};

// The caller's arrays for one step: one pointer and shape per model input (model order), and
// the target (host memory): int64 labels [N] (cross entropy) or float32 of the output's shape
// (mse). On a device backend an input may be device memory on the trainer's device (memory[i]
// Device; the caller checked it), written on the external `streams` (waited for first).
struct Batch {
  std::vector<const void*> inputs;
  std::vector<TensorInfo> infos;
  std::vector<Memory> memory;  // per input; empty: all host
  std::vector<uintptr_t> streams;
  const void* target = nullptr;
  TensorInfo target_info;
};

// One timed part of a step (Trainer::profile): a layer of the head or the tail, the loss, a
// backward step, the check or SGD.
struct StepPart {
  std::string name;       // the layer's name, or what the part is ("loss", "check", "sgd", ...)
  std::string op;         // the layer's op ("<Op> backward" for a backward step), or what runs
  std::string algorithm;
  std::string stage;      // "frozen", "forward", "loss", "backward" or "update"
  std::vector<double> ms;  // per repeat
};

struct StepProfile {
  std::vector<StepPart> parts;  // in run order
  bool graph = false;           // measured on a replayed device graph (no launch gaps)
};

struct TrainerMemory {
  size_t head_arena_bytes = 0;       // the frozen head's activations (reused by liveness)
  TailMemory tail;
  size_t optimizer_bytes = 0;        // momentum buffers and parameter gradients
  size_t keep_everything_bytes = 0;  // every activation of the whole model, had all been kept
};

class Trainer {
 public:
  // DeviceError when `backend` has no training ops.
  Trainer(const Graph& graph, TrainerOptions options, std::unique_ptr<Backend> backend);
  ~Trainer();

  const std::vector<std::string>& parameters() const { return options_.params; }
  // The tail's first node (where gradients stop) and the nodes trained through.
  const GraphSplit& split() const { return split_; }

  // One SGD step at learning rate `lr`; returns the batch loss. NonFiniteLossError (weights
  // unchanged) when the loss or a gradient is not finite.
  double step(const Batch& batch, float lr);
  // The loss and the parameters' gradients without an update (gradient(name) reads them).
  double compute_gradients(const Batch& batch);
  // The loss and the number of rows classified right, forward only.
  LossValue evaluate(const Batch& batch);
  // The time of each part of a step at learning rate `lr` on this batch, over `repeat` steps
  // (device: GPU time between events recorded in the step, replayed as a graph of its own
  // where graphs are on; host: wall-clock time). The parameters and momentum buffers are put
  // back as they were before; a non-finite step is timed like any other.
  StepProfile profile(const Batch& batch, float lr, int repeat);

  // The current values, copied back from the backend's memory when a step changed them.
  const ConstTensor& weight(const std::string& name);
  std::vector<float> velocity(const std::string& name);
  // The gradients of the last compute_gradients().
  const std::vector<float>& gradient(const std::string& name);
  // Replaces a parameter's value or momentum buffer (resume from a checkpoint); InputError
  // naming the parameter when the size differs.
  void set_weight(const std::string& name, const float* data, size_t count);
  void set_velocity(const std::string& name, const float* data, size_t count);

  // Bytes in the backend's memory (device bytes on CUDA) for one step at these shapes.
  TrainerMemory memory(const std::vector<Shape>& shapes);
  std::vector<Shape> default_shapes() const;
  // How each input shape's steps run on a device backend (empty on a host backend): the
  // shapes step() has run, in shape order.
  std::vector<GraphStatus> graphs();
  // The plans of one input shape (planned now if new): the frozen head's (null without one)
  // and the tail's, whose steps() are the backward schedule. Valid while the trainer lives.
  struct Plans {
    const Plan* head = nullptr;
    const TailPlan* tail = nullptr;
  };
  Plans plans(const std::vector<Shape>& shapes);
  const Backend& backend() const { return *backend_; }
  const Graph& graph() const { return graph_; }

 private:
  struct ShapePlan;  // the head plan and buffers, the TailPlan and the step's graph for one shape
  ShapePlan& plan_for(const std::vector<Shape>& shapes);
  void plan_device_io(ShapePlan& sp, size_t target_bytes);
  // Checks the batch, plans, copies it in; with `defer_device_copies` a device-resident input is
  // left to run_step (Note [step input copies]), listed in ShapePlan::device_copies.
  ShapePlan& prepare(const Batch& batch, bool defer_device_copies = false);
  void check_batch(const Batch& batch) const;
  void check_target(const Batch& batch, const ShapePlan& sp) const;
  void set_lr(ShapePlan& sp, float lr);
  // Queue the work of a step; nothing waits for the device. With a timer, each part of the step
  // is marked in order (profile_parts names them).
  void enqueue_forward(ShapePlan& sp, bool want_grad, PartMarks* marks = nullptr);
  void enqueue_step(ShapePlan& sp, PartMarks* marks = nullptr);
  void enqueue_copy_out(ShapePlan& sp) const;
  void run_step(ShapePlan& sp);  // eager, or recorded once and replayed
  StepStats read_stats(const ShapePlan& sp) const;  // waits for the queued work
  std::vector<StepPart> profile_parts(const ShapePlan& sp) const;
  void refresh_host_weights();
  float* param_ptr(size_t i) const;

  Graph graph_;  // the model's graph; the tail's copies of the parameters are the live ones
  TrainerOptions options_;
  GraphSplit split_;
  std::unique_ptr<Engine> head_;     // null when the first node is trainable
  std::unique_ptr<Backend> owned_;   // the backend when there is no head (else the head owns it)
  const Backend* backend_ = nullptr;
  std::unique_ptr<TrainingOps> ops_;
  bool device_ = false;
  ScoreKind scores_ = ScoreKind::Logits;
  int skip_layer_ = -1;
  std::string loss_value_;
  std::map<std::string, std::shared_ptr<ConstTensor>> params_;  // host copies (stale after a device step)
  std::unique_ptr<DeviceConstants> tail_constants_;  // the tail's constants on a device backend
  std::vector<TrainBuffer> velocity_;                // per parameter, backend memory, zeroed at start
  std::map<std::string, std::vector<float>> gradient_;
  TrainBuffer stats_;  // one StepStats
  TrainBuffer lr_;     // host backends: one float, written before each step (a device's is per shape)
  bool host_stale_ = false;
  std::map<std::vector<Shape>, std::unique_ptr<ShapePlan>> plans_;
  std::mutex mutex_;
};

}  // namespace dnnx
