// One loaded model on one backend: the validated graph, its plans (one per input-shape set,
// built on first use and cached) and a pool of run scratch so that several threads may run it.
// On a device backend the constants are uploaded once, here, and runs take turns through the
// DeviceRunner (one stream and one set of library handles per model; runtime/device_runner.h).
#pragma once
#include <atomic>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/device_runner.h"
#include "runtime/executor.h"
#include "runtime/passes/passes.h"
#include "runtime/planner.h"
#include "runtime/stage_value.h"
#include "runtime/stages.h"

namespace dnnx {

struct EngineOptions {
  // On a device backend: from a plan's second run on, replay its layers as one captured graph.
  bool device_graphs = true;
  // How many plans the engine keeps (least recently used out first); at least 1.
  size_t max_plans = 64;
  // The graph inputs' kinds where any is a sequence or optional (Note [sequences]); empty: all
  // tensors. The load-time plan is typed by them, so it stops where a node reads such an input.
  std::vector<ValueKind> input_kinds;
};

// What Engine::plan_for did so far (Model.planner_stats()).
struct PlanStats {
  size_t built = 0;    // plans built (a new input shape or value-input value)
  size_t reused = 0;   // lookups answered by a kept plan
  size_t evicted = 0;  // plans dropped by the max_plans bound
  size_t kept = 0;     // plans kept now
  size_t max_plans = 0;
};

// One stage's or body's plan counts (Note [staged plans] in runtime/stages.h): `path` names it
// from the model down, e.g. "after NonZero 'nz'" or "Loop 'loop' body / If 'if' then_branch".
struct StageStats {
  std::string path;
  PlanStats plans;
};

class Engine {
 public:
  // Validates every node (UnsupportedModelError at load), runs the enabled rewrite passes
  // (runtime/passes) and plans the declared shapes (symbolic dims taken as 1), so that shape
  // errors show at load too; a graph with value inputs is planned on its first run instead
  // (its plans need their values).
  Engine(Graph graph, std::unique_ptr<Backend> backend, const PassOptions& passes = {},
         const EngineOptions& options = {});
  // A stage's or a body's engine (Note [staged plans]): the parent's backend, already rewritten
  // nodes (no passes), nothing planned until it first runs, inputs typed by each run.
  // kept_total: the model's count of kept plans, shared by all its stages and bodies.
  Engine(Graph graph, std::shared_ptr<Backend> backend, const EngineOptions& options, std::string path,
         std::shared_ptr<std::atomic<size_t>> kept_total);

  const Graph& graph() const { return graph_; }
  const Backend& backend() const { return *backend_; }

  // The declared input shapes with every symbolic dim set to 1.
  std::vector<Shape> default_shapes() const;
  // Raises InputError naming the input when count, dtype, rank or a fixed dim is wrong.
  void check_inputs(const std::vector<TensorInfo>& given) const;
  // The graph-input positions whose values join the plan key (Note [value inputs] in
  // runtime/plan_folding.h), ascending; empty for most models.
  const std::vector<int>& value_inputs() const { return value_inputs_; }
  // "name (op): why" of every node that runs on the host inside this device model's plans so far
  // (Note [host fallback] in runtime/host_fallback.h); empty on a host backend.
  std::vector<std::string> host_layers() {
    std::lock_guard<std::mutex> lock(mutex_);
    return host_layers_;
  }
  // The kept plan for this key, or a new one (kept, the least recently used dropped beyond
  // max_plans). Values of inputs that are not value inputs are ignored. Shapes whose tensors
  // cannot fit the device are an InputError naming the tensor and its bytes (Note [absurd sizes]
  // in runtime/size_check.h): the caller chose them.
  std::shared_ptr<const Plan> plan_for(const PlanKey& key);
  std::shared_ptr<const Plan> plan_for(const std::vector<Shape>& shapes) { return plan_for(PlanKey{shapes, {}, {}, {}}); }
  // The key of one run's inputs: their shapes, and the value inputs' bytes (copied back to the
  // host from device memory, after the streams they were written on).
  PlanKey key_of(const std::vector<Shape>& shapes, const RunIO& io);
  PlanStats plan_stats();
  void set_max_plans(size_t max_plans);

  // inputs: graph-input buffers in graph order; outputs: buffers sized for plan.outputs.
  // Safe to call from several threads at once.
  void run(const Plan& plan, const void* const* inputs, void* const* outputs);
  // The same with device memory allowed on either side (a device backend only; the caller has
  // checked that device inputs are on the backend's device). Returns with the outputs complete.
  void run(const Plan& plan, const RunIO& io);
  // Per-layer times of `repeat` runs on these inputs (outputs are not written).
  LayerTimes profile(const Plan& plan, const RunIO& io, int repeat);
  // How each plan's layers run on a device backend (empty on a host backend).
  std::vector<GraphStatus> graphs();

  // Note [staged plans]: runs `plan` (staged or not) on host values in graph-input order and
  // returns the graph outputs; a staged plan runs its value-shaped node here and the rest through
  // the continuation's engine. Values may be sequences and optionals (Note [sequences]).
  std::vector<HostValue> run_values(const Plan& plan, const std::vector<HostValue>& inputs);
  // The same, planning for these values (their kinds, shapes, types and value-input values) first.
  std::vector<HostValue> run_values(const std::vector<HostValue>& inputs);
  // The key of host values: a tensor's shape and type, a sequence's or optional's kind.
  PlanKey key_of_values(const std::vector<HostValue>& inputs) const;
  // run_values over tensors only: an output that is not a tensor is an InvalidModelError naming it.
  std::vector<ConstTensorPtr> run_tensors(const std::vector<ConstTensorPtr>& inputs);
  // The engine of one graph attribute of one of this graph's nodes, built on first use.
  Engine& body(const Node& node, const std::string& attr);
  // Every stage's and body's plan counts below this engine (built so far), depth first.
  std::vector<StageStats> stage_stats();
  // The plans kept by this engine, its stages and bodies together.
  size_t plans_kept_total() const { return kept_total_->load(); }
  // Arrays handed to the caller; null on a host backend (device arrays exist only on a device).
  DeviceRunner* device() { return device_.get(); }

 private:
  // plan_for without the conversion: a TooLargeError stays an InvalidModelError (the declared shapes).
  std::shared_ptr<const Plan> find_or_build(const PlanKey& key);
  std::unique_ptr<RunScratch> acquire_scratch();
  // The engine of the graph after node `cut` (Note [staged plans]), built on first use.
  Engine& continuation(int cut);
  // run_values over stage values (Note [device-resident stages] in runtime/stage_value.h): a
  // continuation's inputs, some of them in device arrays; the outputs on the host.
  std::vector<HostValue> run_stage(const Plan& plan, const std::vector<StageValue>& inputs);
  std::vector<HostValue> run_stage(std::vector<StageValue> inputs);
  // Note [last stage plan]: the plan this engine found or built last, when `inputs` (all tensors,
  // no value inputs) match its key; null otherwise.
  std::shared_ptr<const Plan> last_plan_for(const std::vector<StageValue>& inputs);
  // The node a plan stops at, on the host: its inputs read back from `values` (the stage's
  // values by slot, Note [stage slots] in runtime/stages.h), its outputs put there.
  void run_on_host(const Node& node, const StageSlots& slots, std::vector<StageValue>& values);
  // The graph's outputs when the node was the last, else the continuation run on what it reads.
  std::vector<HostValue> finish_stage(const Plan& plan, const Node& node, const StageSlots& slots,
                                      std::vector<StageValue>& values);
  // Note [device staged kernels] (runtime/staged_kernel.h): the node `plan` stops at, on its
  // device kernel, reading its inputs from `values` and putting its outputs there as device
  // arrays; false when the kernel hands this run to the host compute.
  bool run_staged_on_device(const Plan& plan, const Node& node, const StageSlots& slots, std::vector<StageValue>& values);
  // A plan output that is a non-tensor graph input, handed on as it came.
  StageValue input_named(const std::string& name, const std::vector<StageValue>& inputs) const;
  // The graph constant a staged node reads as its input `name` (no slot holds it).
  const ConstTensorPtr& node_constant(const Node& node, const std::string& name) const;
  // Note [stage slots] (runtime/stages.h): where a staged plan's values lie, worked out on its first run.
  std::shared_ptr<const StageSlots> slots_of(const Plan& plan);
  // What both constructors share after the passes: device constants, folding, host layers.
  void finish_setup(const EngineOptions& options);
  void release_scratch(std::unique_ptr<RunScratch> scratch);

  Graph graph_;
  std::shared_ptr<Backend> backend_;  // shared with the stage and body engines
  EngineOptions options_;
  std::string path_;  // "" for the model; a stage's or body's name (StageStats::path)
  // Plans kept by this model's engines together (Note [staged plans]): bounded by max_plans.
  std::shared_ptr<std::atomic<size_t>> kept_total_ = std::make_shared<std::atomic<size_t>>(0);
  // A stage's or a body's engine: its plans skip the inputs they only pass on (Note [unread
  // stage inputs] in planner.cc)
  bool stage_engine_ = false;
  std::mutex sub_mutex_;  // guards continuations_ and bodies_
  std::map<int, std::unique_ptr<Engine>> continuations_;
  std::map<std::pair<const Node*, std::string>, std::unique_ptr<Engine>> bodies_;
  const Backend* host_;  // folds shape computations at plan time (runtime/plan_folding.h); may be null
  std::unique_ptr<DeviceConstants> device_constants_;  // null on a host backend
  std::unique_ptr<DeviceRunner> device_;               // null on a host backend
  struct KeptPlan {
    std::shared_ptr<const Plan> plan;
    std::list<PlanKey>::iterator recency;  // its place in recency_
  };
  // Drops the least recently used plans beyond max_plans_; returns their ids (the caller holds mutex_).
  std::vector<uint64_t> evict_locked();

  std::vector<int> value_inputs_;
  std::vector<std::string> host_layers_;
  std::mutex mutex_;         // guards plans_, recency_, stats_, stage_slots_, last_plan_ and free_scratch_
  std::map<PlanKey, KeptPlan> plans_;
  std::list<PlanKey> recency_;  // most recently used first
  std::map<uint64_t, std::shared_ptr<const StageSlots>> stage_slots_;  // by plan id (Note [stage slots])
  // Note [last stage plan]: the plan found or built last, and its key's place in recency_.
  std::shared_ptr<const Plan> last_plan_;
  std::list<PlanKey>::iterator last_recency_;
  PlanStats stats_;
  std::vector<std::unique_ptr<RunScratch>> free_scratch_;
};

}  // namespace dnnx
