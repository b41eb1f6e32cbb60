// The interface every backend implements: its planning services. The core never includes a
// device header: a backend turns one node with fixed shapes into a Kernel plus the algorithm and
// workspace it needs. A device backend also offers device services (runtime/device_services.h),
// which a host backend has none of.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ops/op.h"
#include "runtime/device_services.h"
#include "runtime/staged_kernel.h"

namespace dnnx {

class TrainingOps;     // runtime/training.h
class KernelRegistry;  // runtime/kernel_registry.h

// The buffers of one kernel call. Shapes were fixed when the kernel was planned, so a call
// carries only pointers: one per node input/output, nullptr where an optional one is omitted.
struct KernelArgs {
  const void* const* inputs;
  void* const* outputs;
  void* workspace;  // at least the kernel's scratch_bytes + workspace_bytes, shared by every layer
  // Where a kernel that makes strings puts them (Note [string tensors] in ir/tensor.h): the run's
  // store, or a plan-time fold's; null where no string is made (a device kernel, a float op).
  StringStore* strings = nullptr;

  template <class T = float>
  const T* in(size_t i) const { return static_cast<const T*>(inputs[i]); }
  template <class T = float>
  T* out(size_t i) const { return static_cast<T*>(outputs[i]); }
};

// A planned kernel: immutable after planning, so one may run from several threads at once.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void run(const KernelArgs& args) const = 0;
};

// An algorithm the backend considered and did not take, with the reason (for plan()).
struct Rejected {
  std::string algorithm;
  std::string reason;
};

// What the planner did on one backend: counters ("timing_runs": exhaustive searches that timed
// candidates on the GPU, "cache_hits": choices read from the persistent plan cache, ...) and the
// warnings not shown yet (a stale cache entry that was dropped, a cache file that could not be
// written). The CPU backend has nothing to report.
struct PlannerReport {
  std::map<std::string, double> counters;
  std::vector<std::string> warnings;
  std::string cache_path;  // "" when no plan cache is used
};

struct KernelChoice {
  std::unique_ptr<Kernel> kernel;
  std::string algorithm;  // e.g. "im2col+gemm", "gemm(1x1)", "direct"
  std::string math;       // the arithmetic, where a library offers a choice: "fp32 (FMA)", ...
  size_t workspace_bytes = 0;  // what the algorithms ask for: bounded by the backend's workspace limit
  // A fused layer's own activation between its two halves (the conv's output in Conv+MaxPool):
  // it sits in the shared workspace buffer ahead of the workspace, which KernelArgs::workspace
  // points at; not bounded by the workspace limit (unfused, the arena would hold it).
  size_t scratch_bytes = 0;
  double time_ms = -1;    // measured by an exhaustive search; -1 when not measured
  std::vector<Rejected> rejected;
  // Note [output over an input] (runtime/planner.cc): output 0 may take the bytes of input
  // `overwrites_input` (>= 0) where no later layer reads that input: the kernel reads each of its
  // elements before it writes the same element of output 0, and reads no other. -1: never.
  int overwrites_input = -1;
  // The candidate as the backend's search names it ("IMPLICIT_GEMM", "direct (1 input channel)"):
  // what a run-time fallback asks the backend to avoid (Backend::replan_node); "" for a kernel
  // with no alternative on its backend.
  std::string candidate;
};

// Builds the kernel for one node whose input and output types are now fixed.
using KernelFactory = std::function<KernelChoice(const Node&, const std::vector<ValueInfo>& inputs,
                                                 const std::vector<TensorInfo>& outputs)>;

// Note [channels-last forms] (runtime/passes/channels_last.cc): what the channels_last pass may
// keep channels-last besides the window ops and the same-shape elementwise ops.
struct ChannelsLastForms {
  bool float32_only = false;  // only float32 values (the CPU's channels-last kernels are float32)
  // more unary ops, binary ops that broadcast (a squeeze-and-excitation gate [N, C, 1, 1], a
  // per-channel or scalar constant), Concat and Split on the channel axis, and the model's own
  // Transposes to and from [N, H, W, C] as views
  bool graph_ops = false;
  // with graph_ops: Concat, Split and Slice on the channel axis too, and the channel shuffle
  bool channel_concat = true;
  // with graph_ops: ReduceMean over H and W as GlobalAveragePool@NHWC
  bool pixel_means = true;
  // Note [narrow regions]: a depthwise conv of min_channels channels makes its region wide too
  bool wide_depthwise = false;
  // Note [int8 nhwc conv]: Int8Conv of 8-bit X with channels a multiple of 4, int8 W of zero
  // points 0 and one group runs channels-last too (its 8-bit X, Z and Y), and per-tensor
  // QuantizeLinear / DequantizeLinear pass a channels-last value through as elementwise ops
  bool int8_convs = false;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Why this backend cannot run the node ("" when it can): asked at load for every node.
  virtual std::string unsupported_reason(const Node& node) const = 0;
  virtual KernelChoice plan_node(const Node& node, const std::vector<ValueInfo>& inputs,
                                 const std::vector<TensorInfo>& outputs) const = 0;

  // Note [run-time fallback] (runtime/run_fallback.h): the node planned again after its kernel
  // failed at run time, with none of the `failed` candidates (KernelChoice::candidate) and at most
  // `workspace_cap` bytes of workspace (what the run's shared workspace holds). Throws
  // UnsupportedModelError when the backend has no other candidate (the default); the caller
  // then runs the node on the host.
  virtual KernelChoice replan_node(const Node& node, const std::vector<ValueInfo>& inputs,
                                   const std::vector<TensorInfo>& outputs, const std::vector<std::string>& failed,
                                   size_t workspace_cap) const;

  // Note [device staged kernels] (runtime/staged_kernel.h): the device kernel a value-shaped node
  // that ends a plan runs on, for these input types; a choice with no kernel (the default, and a
  // host backend's) leaves it to the engine's host compute, with the reason.
  virtual StagedChoice plan_staged_node(const Node& node, const std::vector<ValueInfo>& inputs) const;

  // Half storage (precision="fp16" or "bf16" on a device): the 2-byte float type the backend
  // stores (Float16 or BFloat16), or Float32 for none. Under a half type the engine runs the
  // half_storage pass after the other passes (runtime/passes/passes.h), so that every node the
  // backend has a kernel of that type for reads and writes it, and the rest stay float32
  // between conversions.
  virtual DType half_storage() const { return DType::Float32; }
  // Why the backend has no kernel of its half_storage() type for the node ("" when it has one):
  // asked by the half_storage pass for every node, and shown in the plan for the nodes that
  // stay float32.
  virtual std::string half_unsupported_reason(const Node&) const { return "no half kernel"; }

  // Channels last (Note [channels last] in runtime/passes/channels_last.cc): when true, the engine
  // runs the channels_last pass after the other passes (before half storage), so that the 4-D
  // window ops with a "<op>@NHWC" kernel here read and write [N, H, W, C] data.
  virtual bool channels_last() const { return false; }
  // Note [narrow regions] (runtime/passes/channels_last.cc): a region of channels-last ops is
  // kept only where one of its convs has at least this many input channels per group and filters;
  // 0 keeps every region.
  virtual int64_t channels_last_min_channels() const { return 0; }
  // Note [padded channels] (the same file): channels-last convs read their input channels padded
  // to a multiple of this; 1: never padded.
  virtual int64_t channels_last_channel_multiple() const { return 1; }
  // Note [channels-last forms] (the same file): the rewrites past the window ops and the
  // same-shape elementwise ops that this backend's kernels take.
  virtual ChannelsLastForms channels_last_forms() const { return {}; }
  // Where channels_last() is false: whether the pass still runs for the int8 convs' regions alone
  // (then channels_last_forms().int8_convs must be set; Note [int8 nhwc on cuda] in
  // backends/cuda/quant/int8_conv_cuda.cc).
  virtual bool int8_channels_last() const { return false; }

  // Where the kernels' memory lives: nullptr for a host backend (the CPU), whose kernels read
  // the caller's arrays and the constants' bytes in place; a device backend's services otherwise
  // (runtime/device_services.h: memory, copies, graphs, timers, streams).
  virtual const DeviceServices* device() const { return nullptr; }

  // For code that runs on either kind (each does nothing, or uses the host clock, without a device).
  bool uses_host_memory() const { return device() == nullptr; }
  void activate() const;     // makes the device current on the calling thread
  void synchronize() const;  // waits for every queued kernel (DeviceError for a failure seen now)
  int device_index() const;  // the device ordinal; -1 for a host backend
  // A timer with `marks` marks (one per layer, and one after the last): the device's, or the host clock.
  std::unique_ptr<LayerTimer> layer_timer(size_t marks) const;
  // The most a model's tensors may take here (Note [absurd sizes] in runtime/size_check.h): the
  // device's total memory, or the host's physical memory (or the process's cap) for a host
  // backend; and its name in messages ("the host", "cuda:0").
  size_t memory_bytes() const;
  std::string memory_name() const;

  // The planner's counters so far; its warnings are handed out once (the next call has none).
  virtual PlannerReport planner_report() const { return {}; }
  // Called once a plan's layers are planned (or their planning failed): what the backend held
  // for planning them may go (the CUDA searches' scratch, Note [search scratch]). Every planner
  // of layers (build_plan, a training tail's backward schedule, the run-time fallback's
  // replanning) calls it through a LayersPlanned scope.
  virtual void layers_planned() const {}

  // The backend's kernel registrations (op type -> KernelEntry): what it runs and with which
  // capabilities, for the support matrix and the tests that walk every registered op.
  virtual const KernelRegistry& kernels() const = 0;

  // Fine-tuning on this backend: its gradient kernels, loss and SGD (Note [training ops] in
  // runtime/training.h); nullptr where the backend cannot train.
  virtual std::unique_ptr<TrainingOps> training_ops() const;
};

// Calls backend.layers_planned() on every path out of a planner's scope, the throwing ones too.
class LayersPlanned {
 public:
  explicit LayersPlanned(const Backend& backend) : backend_(backend) {}
  ~LayersPlanned() { backend_.layers_planned(); }
  LayersPlanned(const LayersPlanned&) = delete;
  LayersPlanned& operator=(const LayersPlanned&) = delete;

 private:
  const Backend& backend_;
};

}  // namespace dnnx
