// Note [device staged kernels]: a value-shaped node (Note [staged plans] in runtime/stages.h)
// ends its plan, and the engine runs it between stages. On a host backend, and on a device for
// the ops without one of these kernels (Compress, Unique, the sequence ops), that is the op's host
// compute (OpDef::evaluate) on inputs read back to the host. A device backend may instead offer a
// StagedKernel (Backend::plan_staged_node, registered with KernelRegistry::add_staged): the node
// then runs on the device in two calls, so that its output shape crosses to the host as one small
// copy and its values never do:
//
//   count(args)        queues the pass that decides the output shapes (NonZero: the count of
//                      nonzero elements; NonMaxSuppression: the selections) into the workspace,
//                      reads the counts back with one small copy and returns the output types;
//   write(args, out)   queues writing the outputs, device arrays of those types that the engine
//                      allocated, from what count left in the workspace.
//
// The engine (Engine::run_staged_on_device, runtime/device_stage.cc) gives every input as device
// memory (a previous stage's array, a constant's device copy, or a host graph input uploaded),
// allocates the workspace and the outputs from the backend's array pool, and takes the device's
// turn around each call; the continuation is then planned for the types count returned and reads
// the outputs as device inputs (Note [device-resident stages] in runtime/stage_value.h). count may
// instead hand the run back to the host (StagedCount::on_host: a value the device kernel cannot
// order as the host does, NonMaxSuppression's NaN scores): the engine then runs the host compute.
// The kernel is planned with the stage's plan, for its input types, and shown in its staged row.
// These types cross the device ABI (kDeviceAbiVersion).
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ops/op.h"

namespace dnnx {

// The buffers of one staged run: device pointers, one per node input (null where omitted), and
// the kernel's workspace_bytes of device memory for this run alone.
struct StagedArgs {
  const void* const* inputs;
  size_t input_count;
  void* workspace;

  // Input i, or null where omitted or past the node's inputs.
  const void* in(size_t i) const { return i < input_count ? inputs[i] : nullptr; }
};

// What count() learned: the output types (one per output the op defines), or why this run goes
// to the host instead ("" when it does not; the types are then unused).
struct StagedCount {
  std::vector<TensorInfo> outputs;
  std::string on_host;
};

// A planned staged kernel: immutable after planning (its state lives in the workspace).
class StagedKernel {
 public:
  virtual ~StagedKernel() = default;
  // Returns once the counts are on the host (the one copy waits for the work queued before it).
  // Errors a value causes (an iou_threshold outside [0, 1]) are InputErrors naming the node.
  virtual StagedCount count(const StagedArgs& args) const = 0;
  // Queues the outputs' writes; they are complete in the device's stream order.
  virtual void write(const StagedArgs& args, void* const* outputs) const = 0;
};

struct StagedChoice {
  std::unique_ptr<StagedKernel> kernel;  // null: the engine runs the node on the host
  std::string algorithm;                 // for the plan's staged row: "two-pass count scan", ...
  size_t workspace_bytes = 0;
  std::string host_reason;  // kernel null: why (the plan's staged row says it)
};

// Plans a staged kernel for one node whose input types are fixed (UnsupportedModelError naming
// what it refuses: the node then runs on the host, with that reason).
using StagedFactory = std::function<StagedChoice(const Node&, const std::vector<ValueInfo>& inputs)>;

}  // namespace dnnx
