// The training contract between engine/train and a backend, in one header: the gradient kernels
// (GradKernel and its factory: the backward half of a kernel, registered beside the forward one) and the ops
// fine-tuning needs besides them (TrainingOps: the loss with its gradient, the non-finite check,
// the SGD update and the fan-in sum; engine/train runs them; see Note [training ops]).
//
// Note [training ops]: a backend hands these out through one virtual, Backend::training_ops(),
// rather than a new dlsym entry point: the trainer always holds the backend it trains on, a
// device library already builds that backend, and a virtual keeps the CPU and CUDA paths one
// code path (the CPU's ops run on the host: backends/cpu/train/training_cpu.cc; CUDA's are kernels
// on the model's stream: backends/cuda/train/training_cuda.cc). The core includes no device header:
// every pointer below is backend memory (host memory on the CPU, device memory on CUDA), and
// every op is queued in the backend's order, so that a whole step can be recorded as one
// device graph (Backend::capture). Nothing here waits for the device: the step's outcome
// (loss, rows right, a non-finite flag) is written to a StepStats in backend memory and copied
// back once per step. Any change here changes what the core and a device library share: bump
// kDeviceAbiVersion (runtime/device_options.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.h"

namespace dnnx {

// --- Gradient kernels: the backward half of a kernel (backends/<device>/<op>_grad_<device>.cc).
// The buffers of one backward call, one pointer per node input/output (nullptr where absent).
// `inputs` and `outputs` are the forward values the trainer kept; `d_outputs` the gradients of
// the loss with respect to the outputs (nullptr where no gradient reaches an output).
// A non-null d_inputs[i] must be written in full (overwritten, not accumulated): the trainer
// adds up the contributions of several consumers itself (Note [gradient fan-in] in
// train/tail_plan.cc), so a kernel never needs its output zeroed first.
struct GradArgs {
  const void* const* inputs;
  const void* const* outputs;
  const float* const* d_outputs;
  float* const* d_inputs;
  void* workspace;
  void* kept;  // the layer's kept memory (Note [training forward]); nullptr when it keeps none

  const float* in(size_t i) const { return static_cast<const float*>(inputs[i]); }
  const float* out(size_t i) const { return static_cast<const float*>(outputs[i]); }
};

class GradKernel {
 public:
  virtual ~GradKernel() = default;
  virtual void run(const GradArgs& args) const = 0;
  // The layer's forward in training mode, for a kernel whose choice says runs_forward (Note
  // [training forward]): the node's inputs and outputs as the inference kernel gets them, the
  // shared workspace, and the kept memory the backward then reads.
  virtual void forward(const KernelArgs& /*args*/, void* /*kept*/) const {}
};

struct GradChoice {
  std::unique_ptr<GradKernel> kernel;
  std::string algorithm;
  size_t workspace_bytes = 0;  // the forward's (when runs_forward) and the backward's alike
  std::vector<Rejected> rejected;  // the algorithms not taken, with the reason (CUDA Conv's planner)
  // Note [training forward]: the kernel runs the layer's forward (what it runs, for the plan),
  // keeping kept_bytes of backend memory from the forward to the backward.
  bool runs_forward = false;
  std::string forward_algorithm;
  size_t kept_bytes = 0;
};

// What a gradient factory is told: the node, its input and output types (as for the forward
// kernel), which inputs need a gradient, and the forward backend (so that a gradient may reuse
// a forward kernel: Transpose's gradient is a Transpose).
struct GradRequest {
  const Node& node;
  const std::vector<ValueInfo>& inputs;
  const std::vector<TensorInfo>& outputs;
  const std::vector<bool>& needs_grad;  // one per node input
  const Backend& forward;
};

// Registered beside the forward kernel: KernelEntry::gradient (runtime/kernel_registry.h).
using GradFactory = std::function<GradChoice(const GradRequest&)>;

// --- The rest of a step.

enum class LossKind { CrossEntropy, MeanSquaredError };
// What the cross entropy reads: the scores before a softmax, or the log-probabilities.
enum class ScoreKind { Logits, LogProbs };

// SGD with momentum, Nesterov momentum and weight decay (train/sgd.h gives the formula).
struct SgdOptions {
  float momentum = 0.0f;
  float weight_decay = 0.0f;
  bool nesterov = false;
};

// What one step reports, in backend memory (plain data: the same bytes on host and device).
// non_finite: 0 when every value checked was finite; 1 when the loss was not; 2 + i when
// parameter i's gradient is the first (in parameter order) holding a non-finite value.
struct StepStats {
  double loss = 0;
  int64_t correct = 0;  // rows whose highest score is the label (or, for mse, the target's argmax)
  int32_t non_finite = 0;
  int32_t unused = 0;
};
constexpr int32_t kLossNotFinite = 1;
constexpr int32_t kFirstGradientCode = 2;

// One loss call: scores y [n, c]; target int64 labels [n] (already checked to lie in [0, c))
// or float [n, c]; d_y (nullptr: forward only) receives dLoss/dy, the batch mean's gradient.
struct LossCall {
  LossKind kind = LossKind::CrossEntropy;
  ScoreKind scores = ScoreKind::Logits;
  const float* y = nullptr;
  int64_t n = 0, c = 0;
  const void* target = nullptr;
  float* d_y = nullptr;
};

// One trained parameter as the update sees it: w, its gradient and its momentum buffer, [n]
// each, in backend memory (velocity unused without momentum).
struct ParamSlot {
  float* w = nullptr;
  const float* grad = nullptr;
  float* velocity = nullptr;
  int64_t n = 0;
};

// The end of a step over every trained parameter at once (Note [multi-tensor update]): planned
// once per input shape, since the gradients live in that shape's TailPlan, so that a device
// queues two launches per step whatever the number of parameters.
class ParamUpdate {
 public:
  virtual ~ParamUpdate() = default;
  // When stats->non_finite is 0 and some parameter's gradient holds a non-finite value, sets
  // it to kFirstGradientCode + i for the first such parameter i (slot order). `lr` is the same
  // pointer sgd() then gets: a device reads it here, once, into its own memory (Note [lr
  // staging] in backends/cuda/train/param_update_cuda.cc); a host backend ignores it.
  virtual void check_finite(const float* lr, StepStats* stats) const = 0;
  // SGD (train/sgd.h) on every slot at learning rate *lr (read when the update runs). Does
  // nothing when stats->non_finite is set, so that a failed step leaves every w and velocity be.
  // Either way it then writes *stats to *report (host memory from allocate_host, or any host
  // memory on a host backend; null: nothing is written), so that a step ends without a copy.
  virtual void sgd(const float* lr, const StepStats* stats, StepStats* report) const = 0;
};

class TrainingOps {
 public:
  virtual ~TrainingOps() = default;
  // Writes every field of *stats: the loss, the rows right, and non_finite (0 or kLossNotFinite).
  virtual void loss(const LossCall& call, StepStats* stats) const = 0;
  // The check and update of `params` (their memory outlives the returned object).
  virtual std::unique_ptr<ParamUpdate> plan_update(const SgdOptions& options,
                                                   const std::vector<ParamSlot>& params) const = 0;
  // dst[i] += src[i] (Note [gradient fan-in] in train/tail_plan.cc).
  virtual void accumulate(float* dst, const float* src, int64_t n) const = 0;
  // Page-locked host memory for what a step moves in and out (the batch, the learning rate, the
  // targets, the StepStats), mapped into the device's address space at the same address: the
  // batch is copied from it by asynchronous DMA, and kernels read the lr and the targets and
  // write the StepStats in place (Note [step io] in train/trainer_shape_plan.h). nullptr where
  // the backend reads host memory in place (the CPU) or has none to give. Freed with release_host.
  virtual void* allocate_host(size_t /*bytes*/) const { return nullptr; }
  virtual void release_host(void* /*ptr*/) const noexcept {}
  // Queues a copy of `bytes` from backend memory to `host` (memory from allocate_host, or any
  // host memory where the backend computes on the host), in the backend's order and without
  // waiting for it: a recorded step ends with it, and the caller waits once (Backend::synchronize).
  virtual void copy_to_pinned(void* host, const void* src, size_t bytes) const = 0;
};

}  // namespace dnnx
