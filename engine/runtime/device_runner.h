// Runs the plans of one engine on a device backend: inputs copied into the arena, the layers
// replayed as one captured graph per plan, outputs copied out (Note [device runs]).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/device_memory.h"
#include "runtime/executor.h"

namespace dnnx {

// How the layers of one plan run (Engine::graphs, Model.graphs()).
struct GraphStatus {
  std::vector<Shape> input_shapes;
  std::string state;      // "captured", "pending", "off", "unavailable" or "failed: <why>"
  size_t captures = 0;    // graphs recorded for this plan (again after the arena moved)
  size_t replays = 0;     // runs that replayed a graph
  size_t eager_runs = 0;  // runs that queued the layers one by one
};

class DeviceRunner {
 public:
  // use_graphs: replay a captured graph from a plan's second run on (off: always eager).
  DeviceRunner(const Backend& backend, bool use_graphs);

  // The device is used by one thread at a time: runs, planning (which queues work on the same
  // stream) and array allocation all hold this turn.
  std::unique_lock<std::mutex> turn() { return std::unique_lock<std::mutex>(mutex_); }

  // Each of these takes the turn itself. run returns when the outputs hold the results.
  void run(const Plan& plan, const RunIO& io);
  LayerTimes profile(const Plan& plan, const RunIO& io, int repeat);
  std::vector<GraphStatus> graphs();
  // Drops the graph of a plan the engine no longer keeps (Engine's least-recently-used bound);
  // the caller holds the turn.
  void forget(uint64_t plan_id) { slots_.erase(plan_id); }

  // Arrays handed to the caller (Backend::allocate_array); to_host waits for `readers` first.
  void* allocate_array(size_t bytes);
  void release_array(void* ptr, size_t bytes, const std::vector<uintptr_t>& readers) noexcept;
  void array_to_host(void* dst, const void* src, size_t bytes, const std::vector<uintptr_t>& readers);
  void array_from_host(void* dst, const void* src, size_t bytes);
  void copy_array(void* dst, const void* src, size_t bytes);

 private:
  struct GraphSlot {
    std::unique_ptr<DeviceGraph> graph;
    std::string failure;  // why capturing failed; the plan then runs eagerly
    GraphStatus status;   // shapes and counters (state is filled in by graphs())
  };

  void prepare(const Plan& plan, const RunIO& io);  // arena, bindings, input streams, host inputs
  void bind(const Plan& plan, const RunIO& io);     // call_.value_ptrs (Note [kept bindings])
  void copy_host_inputs(const Plan& plan, const RunIO& io);  // the host inputs into the arena
  // The graph this run of `plan` replays (recorded now on its second run); null: run eagerly.
  DeviceGraph* graph_for(const Plan& plan, GraphSlot& slot);
  void collect_edge_copies(const Plan& plan, const RunIO& io);  // the device inputs and outputs
  void finish(const Plan& plan, const RunIO& io);   // host outputs, then wait for the stream

  const Backend& backend_;
  const DeviceServices& device_;  // backend_.device()
  const bool use_graphs_;
  std::mutex mutex_;
  DeviceBuffer arena_;
  DeviceBuffer workspace_;
  CallScratch call_;
  // This run's device-to-device copies (Note [edge copies]): device inputs into the arena,
  // arena values out to device outputs; one entry per plan input / output (empty for host ones).
  std::vector<EdgeCopy> copies_in_, copies_out_;
  // One slot per plan the engine has run and still keeps, by Plan::id.
  std::map<uint64_t, GraphSlot> slots_;
  // The arena and workspace the current graphs were recorded with.
  const void* recorded_arena_ = nullptr;
  const void* recorded_workspace_ = nullptr;
  // Note [kept bindings]: the plan and arena call_.value_ptrs were bound for, and that plan's
  // graph-input values (value id, input index): a run of the same plan in the same arena
  // rebinds those alone.
  uint64_t bound_plan_ = 0;
  const void* bound_arena_ = nullptr;
  std::vector<std::pair<int, int>> bound_inputs_;
};

}  // namespace dnnx
