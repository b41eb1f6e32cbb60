// The planner: for fixed input shapes, infer every tensor's type, ask the backend for each
// layer's kernel (algorithm + workspace), then place all activations in one arena by liveness.
// The Plan is data: printable (Model.plan()), and immutable once built, so it may serve several
// threads at once; each run brings its own arena.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/device_memory.h"
#include "runtime/values/host_value.h"
#include "ir/graph.h"

namespace dnnx {

// Where a value's bytes are during a run. On a device backend the graph inputs are Arena
// values too (copied in at the start of a run), and Constant values are the device copies.
enum class Storage { Arena, GraphInput, Constant, Absent };

struct PlannedValue {
  std::string name;
  TensorInfo info;
  Storage storage = Storage::Absent;
  size_t offset = 0;          // Arena: byte offset (a view shares its source's offset)
  int input_index = -1;       // GraphInput: position among the graph inputs
  const ConstTensor* constant = nullptr;  // Constant: the load-time tensor
  const void* data = nullptr;             // Constant: where kernels read it (host or device)
  // Note [sequences]: a sequence or optional graph input of a stage or body, held by the engine;
  // a 0-byte placeholder here, and any node reading it ends the plan.
  ValueKind kind = ValueKind::Tensor;
};

struct PlannedLayer {
  const Node* node = nullptr;
  std::vector<int> inputs;   // value ids; -1 for an omitted optional input
  std::vector<int> outputs;  // value ids; -1 for an omitted optional output
  std::unique_ptr<Kernel> kernel;  // null for a view (Reshape, Flatten, ...), a folded or an empty layer
  std::string algorithm;
  std::string math;
  size_t workspace_bytes = 0;
  size_t scratch_bytes = 0;  // KernelChoice::scratch_bytes
  double time_ms = -1;
  std::vector<Rejected> rejected;
  int overwrites_input = -1;  // KernelChoice::overwrites_input
};

// What one plan is built for: the input shapes and the values of the value inputs (Note [value
// inputs] in runtime/plan_folding.h). Engine::plan_for keeps one plan per key.
struct PlanKey {
  std::vector<Shape> shapes;            // one per graph input
  std::vector<ConstTensorPtr> values;   // one per graph input: a value input's value, else null
  // One per graph input, or empty for the graph's declared types. A body or continuation graph
  // (Note [staged plans] in runtime/stages.h) is typed by what its parent passes.
  std::vector<DType> dtypes;
  // One per graph input, or empty for all tensors: a sequence or optional input (Note [sequences]),
  // whose shapes entry is [0] and dtypes entry its element type.
  std::vector<ValueKind> kinds;
  bool operator<(const PlanKey& other) const;  // by shapes, then types, then the values' bytes
};

struct Plan {
  uint64_t id = 0;  // unique in the process: what a DeviceRunner keys its graphs by (never an address)
  std::vector<Shape> input_shapes;
  std::vector<ConstTensorPtr> input_values;  // PlanKey::values
  std::vector<PlannedValue> values;
  std::vector<PlannedLayer> layers;
  std::vector<int> outputs;  // value ids of the graph outputs, in graph order
  std::vector<int> inputs;   // value ids of the graph inputs, in graph order
  bool device = false;       // planned for a device backend (graph inputs live in the arena)
  bool has_strings = false;  // a value is a string tensor: a run needs a StringStore (Note [string tensors])
  size_t arena_bytes = 0;      // the arena after liveness placement
  size_t naive_bytes = 0;      // the sum of every activation's size (what no reuse would need)
  size_t workspace_bytes = 0;  // one workspace for all layers: the largest single need (scratch included)
  // The values folded for these shapes (Note [plan-time folding] in runtime/plan_folding.h), and
  // on a device backend their device copies; PlannedValue::constant and data point into them.
  std::vector<std::shared_ptr<ConstTensor>> folded;
  std::vector<DeviceBuffer> folded_device;
  int folded_nodes = 0;
  // "name (op): why" of each layer that runs on the host in this device plan (Note [host fallback]).
  std::vector<std::string> host_layers;
  // Note [staged plans] (runtime/stages.h): the graph node this plan stops before (-1: none,
  // the plan runs the whole graph), why, and the names of `outputs` then (carried_names).
  int stage_node = -1;
  const Node* staged_at = nullptr;  // that node
  // The nodes of If branches planned in place (Note [inlined branches] in planner.cc), renamed.
  std::vector<std::unique_ptr<Node>> inlined;
  std::string stage_reason;
  std::vector<std::string> carried;
  // Note [device staged kernels] (runtime/staged_kernel.h): on a device backend, the kernel the
  // node at stage_node runs on, planned for its input types (null: the engine's host compute,
  // stage_host_reason says why), its algorithm and workspace for the staged row.
  std::unique_ptr<StagedKernel> stage_kernel;
  std::string stage_algorithm;
  size_t stage_workspace = 0;
  std::string stage_host_reason;
};

// What plan() shows for a layer whose outputs all hold 0 elements: it gets no kernel and runs
// nothing on any backend (Note [empty tensors] in planner.cc).
inline constexpr const char* kEmptyOutput = "empty output: nothing to run";

// Why a device plan runs a layer with an empty input and a non-empty output on the host.
inline constexpr const char* kEmptyInputOnHost = "an empty input with a non-empty output (Note [empty tensors])";

// Whether a present input holds 0 elements.
bool any_input_empty(const std::vector<ValueInfo>& inputs);

// Whether every output `node` produces (the omitted ones aside) holds 0 elements; false for a
// node with no outputs.
bool outputs_empty(const Node& node, const std::vector<TensorInfo>& outputs);

// Validates every node against the op registry and the backend; throws UnsupportedModelError
// naming the first node that cannot run, with the op and what is supported.
// `host` (may be null): the backend that folds shape computations at plan time; the nodes it
// folds are not the backend's to run (Note [plan-time folding]).
void validate_graph(const Graph& graph, const Backend& backend, const Backend* host = nullptr);

// key: the input shapes, and a value for every value input (an InputError naming the input
// when one is missing). device_constants: the graph's constants on a device backend (nullptr on a host backend,
// whose kernels read the constants' own bytes).
// stage: a stage's or a body's graph, whose engine hands on the inputs its layers do not
// read (Note [unread stage inputs] in planner.cc: on a device they get no arena bytes and no copy).
std::shared_ptr<Plan> build_plan(const Graph& graph, const Backend& backend, const PlanKey& key,
                                 const DeviceConstants* device_constants = nullptr, const Backend* host = nullptr,
                                 bool stage = false);

}  // namespace dnnx
