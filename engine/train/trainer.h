// Fine-tuning on the CPU: a frozen head (a plain inference Engine, passes on) feeds a trainable
// tail (TailPlan: activations kept, gradient kernels, passes off so that every parameter is the
// model's own initializer, unfolded and unfused). One step: head forward, tail forward, loss,
// backward over the tail only, then SGD in place on the parameters. The training state (the
// parameters' current values, the momentum buffers, one TailPlan per input shape) lives here;
// the kernels stay immutable. One thread at a time.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/engine.h"
#include "train/loss.h"
#include "train/sgd.h"
#include "train/split.h"
#include "train/tail_plan.h"

namespace dnnx {

struct TrainerOptions {
  std::vector<std::string> params;  // the trainable constants (train/trainable.h selects them)
  LossKind loss = LossKind::CrossEntropy;
  SgdOptions sgd;
  PassOptions head_passes;          // the frozen head's rewrites
};

// A step whose loss or gradients are not finite: the parameters are left as they were.
struct NonFiniteLossError : Error {
  using Error::Error;
};

// The caller's arrays for one step: one pointer and shape per model input (model order), and
// the target: int64 labels [N] (cross entropy) or float32 of the output's shape (mse).
struct Batch {
  std::vector<const void*> inputs;
  std::vector<TensorInfo> infos;
  const void* target = nullptr;
  TensorInfo target_info;
};

struct TrainerMemory {
  size_t head_arena_bytes = 0;       // the frozen head's activations (reused by liveness)
  TailMemory tail;
  size_t optimizer_bytes = 0;        // momentum buffers and parameter gradients
  size_t keep_everything_bytes = 0;  // every activation of the whole model, had all been kept
};

class Trainer {
 public:
  Trainer(const Graph& graph, TrainerOptions options, std::unique_ptr<Backend> head_backend,
          std::unique_ptr<Backend> tail_backend, std::unique_ptr<GradRegistry> grads);
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

  const ConstTensor& weight(const std::string& name) const;
  const std::vector<float>& velocity(const std::string& name) const;
  const std::vector<float>& gradient(const std::string& name) const;
  // Replaces a parameter's value or momentum buffer (resume from a checkpoint); InputError
  // naming the parameter when the size differs.
  void set_weight(const std::string& name, const float* data, size_t count);
  void set_velocity(const std::string& name, const float* data, size_t count);

  TrainerMemory memory(const std::vector<Shape>& shapes);
  std::vector<Shape> default_shapes() const;

 private:
  struct ShapePlan;  // the head plan, the boundary buffers and the TailPlan for one input shape
  ShapePlan& plan_for(const std::vector<Shape>& shapes);
  void check_batch(const Batch& batch) const;
  LossValue forward_and_loss(const Batch& batch, ShapePlan& sp, bool want_grad);
  void collect_gradients(ShapePlan& sp);

  Graph graph_;  // the model's graph; the tail's copies of the parameters are the live ones
  TrainerOptions options_;
  GraphSplit split_;
  std::unique_ptr<Engine> head_;  // null when the first node is trainable
  std::unique_ptr<Backend> tail_backend_;
  std::unique_ptr<GradRegistry> grads_;
  ScoreKind scores_ = ScoreKind::Logits;
  int skip_layer_ = -1;
  std::string loss_value_;
  std::map<std::string, std::shared_ptr<ConstTensor>> params_;
  std::map<std::string, std::vector<float>> velocity_;
  std::map<std::string, std::vector<float>> gradient_;
  std::map<std::vector<Shape>, std::unique_ptr<ShapePlan>> plans_;
  std::mutex mutex_;
};

}  // namespace dnnx
