#include "runtime/device_runner.h"

#include <cstdio>

#include "runtime/device_options.h"

namespace dnnx {

// Note [device runs]: a device plan runs in three parts, one run at a time (the backend has one
// stream and one set of library handles per model):
//   1. prepare: the arena and workspace are reserved (one of each per engine, grown to the
//      largest plan run so far), the run waits for the streams its device inputs were written
//      on, and host inputs are copied into the arena (host to device);
//   2. the layers: the first run of a plan queues them one by one; the second records them as a
//      graph (Backend::capture), and every later run replays that graph, one launch for the
//      whole model. A graph holds the arena and workspace addresses it was recorded with, so
//      when either buffer moves (a larger plan grew it) every graph is dropped and recorded
//      again on its plan's next run. A capture that fails (a library call that cannot be
//      recorded) leaves that plan eager for good, with the reason in graphs();
//   3. finish: host outputs are copied out and the stream is waited for, so that a run returns
//      with its outputs complete and its inputs no longer read (a stage that hands device arrays
//      on returns once queued: Note [queued stage runs] in staged_run.cc).
// Note [edge copies]: device inputs and device outputs (the caller's arrays) change address from
// one run to the next, so a graph cannot read or write them in place; they are copied into and
// out of the arena. A replayed graph carries those copies itself: copy nodes before and after
// the layers, set to this run's addresses at launch (DeviceGraph::launch(in, out); the CUDA
// backend changes a node's parameters only when its addresses did change). A run that
// replays is then one launch and one wait, however many inputs and outputs it has. An eager run
// queues the same copies one by one around its layers.
// A DeviceError names the layer where one is to blame (run_layers); the model stays usable.

DeviceRunner::DeviceRunner(const Backend& backend, bool use_graphs)
    : backend_(backend), device_(device_services(backend, "a device run")), use_graphs_(use_graphs) {}

namespace {

std::string shapes_str(const std::vector<Shape>& shapes) {
  std::string text;
  for (const Shape& s : shapes) text += (text.empty() ? "" : ", ") + shape_str(s);
  return "[" + text + "]";
}

std::string gib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  return text;
}

// Grows `buffer`, naming what it is for when the device has no room.
void reserve(DeviceBuffer& buffer, const Backend& backend, size_t bytes, const char* what, const Plan& plan) {
  try {
    buffer.reserve(backend, bytes);
  } catch (const DeviceError& e) {
    throw DeviceError(std::string(what) + " of " + gib(bytes) + " for input shapes " +
                      shapes_str(plan.input_shapes) + ": " + e.what());
  }
}

}  // namespace

void DeviceRunner::prepare(const Plan& plan, const RunIO& io) {
  device_.activate();
  reserve(arena_, backend_, plan.arena_bytes, "the activation arena", plan);
  reserve(workspace_, backend_, plan.workspace_bytes, "the workspace", plan);
  if (arena_.data() != recorded_arena_ || workspace_.data() != recorded_workspace_) {
    for (auto& kv : slots_) kv.second.graph.reset();
    recorded_arena_ = arena_.data();
    recorded_workspace_ = workspace_.data();
  }
  bind(plan, io);
  for (uintptr_t stream : io.input_streams) device_.wait_for_stream(stream);
  copy_host_inputs(plan, io);
}

// Note [kept bindings]: binding walks every value of the plan (arena offset, graph input or
// constant), and a staged plan's continuation holds the rest of the model's values: ~180 stages a
// run of torchvision's SSDlite, each binding thousands of values, took 5% of its CUDA run's host
// time (py-spy, an H100, 2026-12-06, session 13). Only the graph inputs' pointers change from run
// to run of one plan in one arena (the arena's offsets and the constants are the plan's), so such
// a run rebinds those alone.
void DeviceRunner::bind(const Plan& plan, const RunIO& io) {
  if (bound_plan_ == plan.id && bound_arena_ == arena_.data() && call_.value_ptrs.size() == plan.values.size()) {
    for (const auto& [id, input] : bound_inputs_) call_.value_ptrs[static_cast<size_t>(id)] = io.inputs[static_cast<size_t>(input)];
    return;
  }
  bind_values(plan, static_cast<uint8_t*>(arena_.data()), io.inputs.data(), call_.value_ptrs);
  bound_inputs_.clear();
  for (size_t id = 0; id < plan.values.size(); ++id) {
    if (plan.values[id].storage == Storage::GraphInput) bound_inputs_.emplace_back(static_cast<int>(id), plan.values[id].input_index);
  }
  bound_plan_ = plan.id;
  bound_arena_ = arena_.data();
}

void DeviceRunner::copy_host_inputs(const Plan& plan, const RunIO& io) {
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const int id = plan.inputs[i];
    if (io.input_memory[i] == Memory::Device) continue;  // an edge copy
    if (plan.values[id].storage != Storage::Arena) continue;  // a value input: a constant of the plan
    // An arena value: memory we own.
    device_.copy_to_device(const_cast<void*>(call_.value_ptrs[id]), io.inputs[i], plan.values[id].info.bytes());
  }
}

void DeviceRunner::collect_edge_copies(const Plan& plan, const RunIO& io) {
  copies_in_.assign(plan.inputs.size(), EdgeCopy{});
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const int id = plan.inputs[i];
    if (io.input_memory[i] != Memory::Device || plan.values[id].storage != Storage::Arena) continue;
    copies_in_[i] = EdgeCopy{const_cast<void*>(call_.value_ptrs[id]), io.inputs[i], plan.values[id].info.bytes()};
  }
  copies_out_.assign(plan.outputs.size(), EdgeCopy{});
  if (io.output_memory != Memory::Device) return;
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    const int id = plan.outputs[o];
    copies_out_[o] = EdgeCopy{io.outputs[o], call_.value_ptrs[id], plan.values[id].info.bytes()};
  }
}

DeviceGraph* DeviceRunner::graph_for(const Plan& plan, GraphSlot& slot) {
  if (slot.status.input_shapes.empty()) slot.status.input_shapes = plan.input_shapes;
  if (!use_graphs_ || !slot.failure.empty() || slot.status.eager_runs == 0) return nullptr;
  if (!slot.graph) {
    try {
      // Copy nodes for the inputs that can take a copy (those with arena bytes: Note [unread
      // stage inputs] leaves the others out), not for every input: SSDlite's continuations
      // take up to ~270 inputs and copy ~18, and each node is a kernel of its own at replay.
      size_t copied_inputs = 0;
      for (int id : plan.inputs) copied_inputs += plan.values[id].storage == Storage::Arena;
      const GraphEdges edges{copied_inputs, plan.outputs.size()};
      slot.graph = device_.capture([&] { run_layers(plan, workspace_.data(), call_); }, edges);
      if (slot.graph) ++slot.status.captures;
      else slot.failure = "the " + backend_.name() + " backend records no graphs";
    } catch (const DeviceError& e) {
      slot.failure = e.what();
    }
  }
  return slot.graph.get();
}

void DeviceRunner::finish(const Plan& plan, const RunIO& io) {
  if (io.output_memory == Memory::Host) {
    for (size_t o = 0; o < plan.outputs.size(); ++o) {
      const int id = plan.outputs[o];
      device_.copy_to_host(io.outputs[o], call_.value_ptrs[id], plan.values[id].info.bytes());
    }
  }
  if (io.wait || io.output_memory == Memory::Host) device_.synchronize();
}

namespace {

// Note [background search]: a foreground run's device phase, from its first kernel to its
// outputs' arrival (foreground_runs(), device_options.h). The host inputs' copy before it is
// left out: while a run's large input crosses the bus, the SMs are idle and a search may time.
class ForegroundPhase {
 public:
  ForegroundPhase() : counted_(!on_search_thread()) {
    if (!counted_) return;
    foreground_runs().fetch_add(1);
    foreground_starts().fetch_add(1);
  }
  ~ForegroundPhase() {
    if (counted_) foreground_runs().fetch_sub(1);
  }
  ForegroundPhase(const ForegroundPhase&) = delete;
  ForegroundPhase& operator=(const ForegroundPhase&) = delete;

 private:
  bool counted_;
};

}  // namespace

void DeviceRunner::run(const Plan& plan, const RunIO& io) {
  std::lock_guard<std::mutex> lock(mutex_);
  prepare(plan, io);
  collect_edge_copies(plan, io);
  const ForegroundPhase phase;
  GraphSlot& slot = slots_[plan.id];
  if (DeviceGraph* graph = graph_for(plan, slot)) {
    graph->launch(copies_in_, copies_out_);
    ++slot.status.replays;
  } else {
    for (const EdgeCopy& c : copies_in_) device_.copy_on_device(c.dst, c.src, c.bytes);
    run_layers(plan, workspace_.data(), call_);
    for (const EdgeCopy& c : copies_out_) device_.copy_on_device(c.dst, c.src, c.bytes);
    ++slot.status.eager_runs;
  }
  try {
    finish(plan, io);
  } catch (const DeviceLostError& e) {  // Note [run-time fallback]: an asynchronous fault
    throw DeviceLostError(std::string(e.what()) +
                          ". The fault is in work this run queued; kernels run ahead of the host, so the layer "
                          "that faulted is named only when it runs with CUDA_LAUNCH_BLOCKING=1 (each launch waits)");
  }
}

LayerTimes DeviceRunner::profile(const Plan& plan, const RunIO& io, int repeat) {
  std::lock_guard<std::mutex> lock(mutex_);
  prepare(plan, io);
  collect_edge_copies(plan, io);
  for (const EdgeCopy& c : copies_in_) device_.copy_on_device(c.dst, c.src, c.bytes);
  const size_t n = plan.layers.size();
  std::unique_ptr<LayerTimer> timer = device_.layer_timer(n + 1);
  LayerTimes times;
  times.ms.assign(n, {});
  // A graph of its own, with the timer's marks recorded in it: replayed, it shows each layer's
  // device time without the launch gaps of an eager run.
  std::unique_ptr<DeviceGraph> graph;
  if (use_graphs_) {
    try {
      graph = device_.capture([&] { run_layers(plan, workspace_.data(), call_, timer.get()); });
    } catch (const DeviceError&) {
      graph.reset();  // the eager run below names the layer if the failure is not the capture's
    }
  }
  times.graph = graph != nullptr;
  for (int r = 0; r < repeat; ++r) {
    // Note [profiled inputs]: every repeat reads the inputs afresh. An input's arena block is
    // reused by later layers once the input is dead, so a second replay without the copies read
    // what those layers wrote there: harmless for a device kernel's timing, but a host layer
    // (Note [host fallback]) checks its indices, and its failure sticks to the kernel, which the
    // engine's plan shares (the precision choice profiles at load: zoo2/q_dyn_bert.onnx's
    // embedding Gather then refused every run at fp16 and bf16, its ids holding half data).
    if (r > 0) {
      copy_host_inputs(plan, io);
      for (const EdgeCopy& c : copies_in_) device_.copy_on_device(c.dst, c.src, c.bytes);
    }
    if (graph) {
      graph->launch();
    } else {
      run_layers(plan, workspace_.data(), call_, timer.get());
    }
    device_.synchronize();
    for (size_t i = 0; i < n; ++i) times.ms[i].push_back(plan.layers[i].kernel ? timer->elapsed_ms(i) : 0.0);
  }
  return times;
}

std::vector<GraphStatus> DeviceRunner::graphs() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<GraphStatus> out;
  for (const auto& kv : slots_) {
    GraphStatus s = kv.second.status;
    if (!use_graphs_) s.state = "off";
    else if (!kv.second.failure.empty()) s.state = "failed: " + kv.second.failure;
    else s.state = kv.second.graph ? "captured" : "pending";
    out.push_back(std::move(s));
  }
  return out;
}

void* DeviceRunner::allocate_array(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  device_.activate();
  return device_.allocate_array(bytes);
}

void DeviceRunner::release_array(void* ptr, size_t bytes, const std::vector<uintptr_t>& readers) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  device_.release_array(ptr, bytes, readers);
}

void DeviceRunner::array_to_host(void* dst, const void* src, size_t bytes, const std::vector<uintptr_t>& readers) {
  std::lock_guard<std::mutex> lock(mutex_);
  device_.activate();
  for (uintptr_t stream : readers) device_.wait_for_stream(stream);
  device_.copy_to_host(dst, src, bytes);
}

void DeviceRunner::array_from_host(void* dst, const void* src, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  device_.activate();
  device_.copy_to_device(dst, src, bytes);
  device_.synchronize();
}

void DeviceRunner::copy_array(void* dst, const void* src, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  device_.activate();
  device_.copy_on_device(dst, src, bytes);
  device_.synchronize();
}

}  // namespace dnnx
