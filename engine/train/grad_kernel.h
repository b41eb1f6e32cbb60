// The backward half of a kernel: what a backend implements so that the trainer can run an op's
// gradient. One GradKernel per layer of the trainable tail, planned for fixed shapes next to the
// forward kernel (backends/cpu/<op>_grad_cpu.cc) and, like it, immutable once planned.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"

namespace dnnx {

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

using GradFactory = std::function<GradChoice(const GradRequest&)>;

// Op type -> gradient factory; filled by an explicit list per backend (register_cpu_grad_kernels).
class GradRegistry {
 public:
  void add(const std::string& op_type, GradFactory factory) { factories_[op_type] = std::move(factory); }
  const GradFactory* find(const std::string& op_type) const {
    auto it = factories_.find(op_type);
    return it == factories_.end() ? nullptr : &it->second;
  }
  std::string names_joined() const {
    std::string out;
    for (const auto& kv : factories_) out += (out.empty() ? "" : ", ") + kv.first;
    return out;
  }

 private:
  std::map<std::string, GradFactory> factories_;
};

}  // namespace dnnx
