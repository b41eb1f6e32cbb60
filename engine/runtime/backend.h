// The interface every backend implements. The core never includes a device header: a backend
// turns one node with fixed shapes into a Kernel plus the algorithm and workspace it needs.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ops/op.h"

namespace dnnx {

class TrainingOps;     // runtime/training.h
class KernelRegistry;  // runtime/kernel_registry.h

// The buffers of one kernel call. Shapes were fixed when the kernel was planned, so a call
// carries only pointers: one per node input/output, nullptr where an optional one is omitted.
struct KernelArgs {
  const void* const* inputs;
  void* const* outputs;
  void* workspace;  // at least the kernel's scratch_bytes + workspace_bytes, shared by every layer

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
};

// Builds the kernel for one node whose input and output types are now fixed.
using KernelFactory = std::function<KernelChoice(const Node&, const std::vector<ValueInfo>& inputs,
                                                 const std::vector<TensorInfo>& outputs)>;

// A device-to-device copy at the edge of a recorded graph (Note [edge copies] in
// runtime/device_runner.cc): one input of a run into the arena, or one output into the caller's array.
struct EdgeCopy {
  void* dst = nullptr;
  const void* src = nullptr;
  size_t bytes = 0;
};

// How many edge copies a graph records room for: before its work (`in`) and after it (`out`).
struct GraphEdges {
  size_t in = 0;
  size_t out = 0;
};

// Work recorded once and replayed as one launch (a CUDA graph). A replay reads and writes the
// very addresses the recording used, so it is valid only while those buffers stay where they were;
// only its edge copies take new addresses at each replay.
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  virtual void launch() const = 0;  // queues one replay on the backend's stream
  // Queues one replay whose edge copies are `in` (before the recorded work) and `out` (after it):
  // at most the GraphEdges the graph was recorded with. Not thread-safe (the caller's turn).
  virtual void launch(const std::vector<EdgeCopy>& in, const std::vector<EdgeCopy>& out) = 0;
};

// Times the work queued between marks: mark(i) before layer i and mark(n) after the last one;
// read elapsed_ms once that work has finished (after synchronize() on a device backend).
class LayerTimer {
 public:
  virtual ~LayerTimer() = default;
  virtual void mark(size_t i) = 0;
  virtual double elapsed_ms(size_t i) const = 0;  // from mark i to mark i + 1
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Why this backend cannot run the node ("" when it can): asked at load for every node.
  virtual std::string unsupported_reason(const Node& node) const = 0;
  virtual KernelChoice plan_node(const Node& node, const std::vector<ValueInfo>& inputs,
                                 const std::vector<TensorInfo>& outputs) const = 0;

  // Half storage (precision="fp16" on a device): when true, the engine runs the half_storage
  // pass after the other passes (runtime/passes/passes.h), so that every node the backend has a
  // float16 kernel for reads and writes float16 values, and the rest stay float32 between
  // conversions.
  virtual bool half_storage() const { return false; }
  // Why the backend has no float16 kernel for the node ("" when it has one): asked by the
  // half_storage pass for every node, and shown in the plan for the nodes that stay float32.
  virtual std::string half_unsupported_reason(const Node&) const { return "no fp16 kernel"; }

  // Channels last (Note [channels last] in runtime/passes/channels_last.cc): when true, the engine
  // runs the channels_last pass after the other passes (before half storage), so that the 4-D
  // window ops with a "<op>@NHWC" kernel here read and write [N, H, W, C] data.
  virtual bool channels_last() const { return false; }

  // Where the kernels' memory lives. A host backend (the CPU) reads the caller's arrays and
  // the constants' bytes in place, and the hooks below are never called. A device backend's
  // kernels see only its own memory: the engine uploads the constants once at load, places
  // the graph inputs in the device arena (copied in at the start of a run) and copies the
  // outputs back at the end (runtime/device_memory.h: DeviceConstants and the run arena; Note
  // [device runs] in runtime/device_runner.cc).
  virtual bool uses_host_memory() const { return true; }
  // Makes the backend's device current on the calling thread (runs come from any thread).
  virtual void activate() const {}
  // Device memory of at least `bytes` (nullptr for 0); DeviceError when it cannot be had.
  virtual void* allocate(size_t bytes) const;
  virtual void release(void* ptr) const noexcept;
  // Copies in the backend's stream order; copy_to_host returns when `dst` holds the bytes.
  virtual void copy_to_device(void* dst, const void* src, size_t bytes) const;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) const;
  // Waits for every queued kernel; a failure that showed only now is a DeviceError.
  virtual void synchronize() const {}

  // Device runs (Note [device runs] in runtime/device_runner.cc). The defaults suit a host
  // backend: no graphs, no device arrays, the host clock for timing.
  // Records what `enqueue` queues without running it; nullptr where the backend has no graphs.
  // With `edges`, room for that many edge copies before and after it (DeviceGraph::launch).
  virtual std::unique_ptr<DeviceGraph> capture(const std::function<void()>& enqueue, GraphEdges edges) const;
  std::unique_ptr<DeviceGraph> capture(const std::function<void()>& enqueue) const { return capture(enqueue, {}); }
  // A timer with `marks` marks (one per layer, and one after the last).
  virtual std::unique_ptr<LayerTimer> layer_timer(size_t marks) const;
  // The device ordinal the backend runs on; -1 for a host backend.
  virtual int device_index() const { return -1; }
  // The device ordinal `ptr` points into; -1 when it is not device memory.
  virtual int device_of(const void* ptr) const;
  virtual void copy_on_device(void* dst, const void* src, size_t bytes) const;
  // External streams are CUDA stream handles as integers, as DLPack and __cuda_array_interface__
  // pass them (1: the legacy default stream, 2: the per-thread default stream).
  // Makes the backend's later work wait for what is queued now on `stream`.
  virtual void wait_for_stream(uintptr_t stream) const;
  // The stream a producer of device inputs is asked to order its writes before (DLPack's
  // __dlpack__(stream=...)); every run waits for it first. 0 on a host backend.
  virtual uintptr_t import_stream() const { return 0; }
  // Memory for arrays handed to the caller (Model.run(output="device")), taken in the stream's
  // order from a pool, so that a run pays neither cudaMalloc nor cudaFree (which waits for the
  // whole device). release_array (given the size allocate_array was asked for) frees it once the
  // backend's queued work and the work queued now on each of `readers` (external streams) are done.
  virtual void* allocate_array(size_t bytes) const;
  virtual void release_array(void* ptr, size_t bytes, const std::vector<uintptr_t>& readers) const noexcept;

  // The planner's counters so far; its warnings are handed out once (the next call has none).
  virtual PlannerReport planner_report() const { return {}; }

  // The backend's kernel registrations (op type -> KernelEntry): what it runs and with which
  // capabilities, for the support matrix and the tests that walk every registered op.
  virtual const KernelRegistry& kernels() const = 0;

  // Fine-tuning on this backend: its gradient kernels, loss and SGD (Note [training ops] in
  // runtime/training.h); nullptr where the backend cannot train.
  virtual std::unique_ptr<TrainingOps> training_ops() const;
};

}  // namespace dnnx
