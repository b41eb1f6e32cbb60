#include "runtime/engine.h"

#include <algorithm>
#include <cstring>

#include "ops/layout/channels_last.h"
#include "runtime/host_fallback.h"
#include "runtime/plan_folding.h"
#include "runtime/size_check.h"

namespace dnnx {

Engine::Engine(Graph graph, std::unique_ptr<Backend> backend, const PassOptions& passes,
               const EngineOptions& options)
    : graph_(std::move(graph)), backend_(std::move(backend)), options_(options), host_(folding_host()) {
  stats_.max_plans = std::max<size_t>(options.max_plans, 1);
  backend_->activate();  // opened on another thread, perhaps (Note [overlapped device start])
  validate_graph(graph_, *backend_, host_);
  // Note [qdq int8]: before folding, which would dequantize the constant weights
  if (passes.fuse_qdq_int8) fuse_qdq_int8(graph_, passes.checked_by(*backend_));
  fold_graph_constants(graph_, host_);  // before the passes: they read constants
  run_passes(graph_, passes.checked_by(*backend_));
  const DType half = backend_->half_storage();
  static const std::map<std::string, std::string> kNone;
  const std::map<std::string, std::string>& measured = is_half(half) ? passes.keep_fp32 : kNone;  // not copied
  // Note [int8 nhwc on cuda]: a backend whose float layers keep ONNX's layout may still run its int8
  // convs' regions channels-last: the pass then converts no other window op
  const bool int8_only = !backend_->channels_last() && backend_->int8_channels_last();
  if (passes.channels_last && (backend_->channels_last() || int8_only)) {
    for (Node& node : graph_.nodes) {  // Note [measured precision]: fp32 keeps ONNX's layout
      auto kept = measured.find(node.name);
      if (kept != measured.end()) node.layout_reason = "kept in ONNX's layout: " + kept->second;
    }
    channels_last(graph_, [this, &measured, int8_only](const Node& node) {
      if (int8_only && channels_first_op(node.op_type) != "Int8Conv") return false;
      return !measured.count(node.name) && backend_->unsupported_reason(node).empty();
    }, backend_->channels_last_min_channels(), backend_->channels_last_channel_multiple(),
                  backend_->channels_last_forms());
  }
  if (is_half(half)) {
    // bfloat16 has float32's exponent range: only fp16 keeps nodes float32 for their range.
    std::map<std::string, std::string> keep = half == DType::Float16 ? half_range_reasons(graph_, passes.half_calibration)
                                                                     : std::map<std::string, std::string>{};
    for (const auto& [name, why] : measured) keep.emplace(name, "kept in fp32: " + why);  // a range reason stays first
    half_storage(graph_, half, [this](const Node& node) { return backend_->half_unsupported_reason(node); }, keep);
    if (passes.fold_entry_cast) fold_entry_cast(graph_, passes.checked_by(*backend_));
  }
  finish_setup(options);
  if (value_inputs_.empty()) find_or_build(PlanKey{default_shapes(), {}, {}, options.input_kinds});  // the model's own shapes
}

Engine::Engine(Graph graph, std::shared_ptr<Backend> backend, const EngineOptions& options, std::string path,
               std::shared_ptr<std::atomic<size_t>> kept_total)
    : graph_(std::move(graph)), backend_(std::move(backend)), options_(options), path_(std::move(path)),
      kept_total_(std::move(kept_total)), host_(folding_host()) {
  stage_engine_ = true;
  stats_.max_plans = std::max<size_t>(options.max_plans, 1);
  validate_graph(graph_, *backend_, host_);
  fold_graph_constants(graph_, host_);
  finish_setup(options);
}

void Engine::finish_setup(const EngineOptions& options) {
  if (!backend_->uses_host_memory()) {
    device_constants_ = std::make_unique<DeviceConstants>(graph_, *backend_);
    device_ = std::make_unique<DeviceRunner>(*backend_, options.device_graphs);
  }
  const GraphFolding folding = graph_folding(graph_, host_);  // after the passes, which may rename
  value_inputs_ = folding.value_inputs;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (op_registry().find(graph_.nodes[i])->value_shaped) continue;  // the engine runs it
    const std::string why = folding.nodes[i] ? "" : host_fallback_reason(graph_.nodes[i], *backend_, host_);
    if (!why.empty()) host_layers_.push_back(graph_.nodes[i].where() + ": " + why);
  }
}

std::vector<Shape> Engine::default_shapes() const {
  return default_input_shapes(graph_);
}

void Engine::check_inputs(const std::vector<TensorInfo>& given) const {
  if (given.size() != graph_.inputs.size()) {
    std::string names;
    for (const GraphInput& in : graph_.inputs) names += (names.empty() ? "" : ", ") + in.name;
    throw InputError("expected " + std::to_string(graph_.inputs.size()) + " input(s) (" + names +
                     "), got " + std::to_string(given.size()));
  }
  for (size_t i = 0; i < given.size(); ++i) {
    const GraphInput& in = graph_.inputs[i];
    const TensorInfo& got = given[i];
    bool ok = got.dtype == in.dtype && got.shape.size() == in.dims.size();
    for (size_t d = 0; ok && d < in.dims.size(); ++d) {
      ok = in.dims[d] < 0 ? got.shape[d] >= 0 : got.shape[d] == in.dims[d];  // 0: an empty tensor
    }
    if (!ok) {
      throw InputError("input '" + in.name + "': expected " + in.dims_str() + " " + dtype_name(in.dtype) + ", got " +
                       got.str());
    }
  }
}

std::shared_ptr<const Plan> Engine::plan_for(const PlanKey& requested) {
  try {
    return find_or_build(requested);
  } catch (const TooLargeError& e) {
    throw InputError(std::string(e.what()) + " (for the input shapes given)");
  }
}

std::shared_ptr<const Plan> Engine::find_or_build(const PlanKey& requested) {
  PlanKey key{requested.shapes, std::vector<ConstTensorPtr>(graph_.inputs.size()), requested.dtypes, requested.kinds};
  for (int i : value_inputs_) {
    if (static_cast<size_t>(i) < requested.values.size()) key.values[i] = requested.values[i];
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find(key);
    if (it != plans_.end()) {
      recency_.splice(recency_.begin(), recency_, it->second.recency);
      ++stats_.reused;
      last_plan_ = it->second.plan;
      last_recency_ = it->second.recency;
      return it->second.plan;
    }
  }
  std::shared_ptr<const Plan> plan;
  {
    // A device backend plans with the handles its runs use: one at a time.
    std::unique_lock<std::mutex> device_turn;
    if (device_) device_turn = device_->turn();
    plan = build_plan(graph_, *backend_, key, device_constants_.get(), host_, stage_engine_);
  }
  std::vector<uint64_t> evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second.plan;  // a racing thread's plan wins; same content
    for (const std::string& layer : plan->host_layers) {
      if (std::find(host_layers_.begin(), host_layers_.end(), layer) == host_layers_.end()) host_layers_.push_back(layer);
    }
    ++stats_.built;
    recency_.push_front(key);
    plans_.emplace(key, KeptPlan{plan, recency_.begin()});
    last_plan_ = plan;
    last_recency_ = recency_.begin();
    ++*kept_total_;
    evicted = evict_locked();
  }
  if (device_ && !evicted.empty()) {
    // A run still holding an evicted plan may record its graph again; ids are never reused, so
    // no other plan can replay it.
    std::unique_lock<std::mutex> device_turn = device_->turn();
    for (uint64_t id : evicted) device_->forget(id);
  }
  return plan;
}

// Note [staged plans]: the stages and bodies of one model share its max_plans (kept_total_ counts
// every engine's plans); each evicts only its own least recently used plans, and keeps the one
// it built last, so the total may pass the bound by at most one plan per stage or body.
std::vector<uint64_t> Engine::evict_locked() {
  std::vector<uint64_t> ids;
  while (plans_.size() > stats_.max_plans || (plans_.size() > 1 && kept_total_->load() > stats_.max_plans)) {
    auto it = plans_.find(recency_.back());
    ids.push_back(it->second.plan->id);
    if (it->second.plan == last_plan_) last_plan_.reset();
    stage_slots_.erase(it->second.plan->id);
    plans_.erase(it);
    --*kept_total_;
    recency_.pop_back();
    ++stats_.evicted;
  }
  return ids;
}

void Engine::set_max_plans(size_t max_plans) {
  std::vector<uint64_t> evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.max_plans = std::max<size_t>(max_plans, 1);
    options_.max_plans = stats_.max_plans;
    evicted = evict_locked();
  }
  {
    std::lock_guard<std::mutex> lock(sub_mutex_);  // the stages and bodies share the bound
    for (auto& kv : continuations_) kv.second->set_max_plans(max_plans);
    for (auto& kv : bodies_) kv.second->set_max_plans(max_plans);
  }
  if (device_ && !evicted.empty()) {
    std::unique_lock<std::mutex> device_turn = device_->turn();
    for (uint64_t id : evicted) device_->forget(id);
  }
}

PlanStats Engine::plan_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  PlanStats s = stats_;
  s.kept = plans_.size();
  return s;
}

PlanKey Engine::key_of(const std::vector<Shape>& shapes, const RunIO& io) {
  PlanKey key{shapes, std::vector<ConstTensorPtr>(graph_.inputs.size()), {}, {}};
  for (int i : value_inputs_) {
    auto value = std::make_shared<ConstTensor>();
    value->info = TensorInfo{shapes.at(i), graph_.inputs[i].dtype};
    value->data.resize(value->info.bytes());
    if (value->data.empty()) {
      // nothing to read
    } else if (io.input_memory.at(i) == Memory::Device) {
      device_->array_to_host(value->data.data(), io.inputs[i], value->data.size(), io.input_streams);
    } else {
      std::memcpy(value->data.data(), io.inputs[i], value->data.size());
    }
    key.values[i] = std::move(value);
  }
  return key;
}

std::unique_ptr<RunScratch> Engine::acquire_scratch() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_scratch_.empty()) return std::make_unique<RunScratch>();
  std::unique_ptr<RunScratch> s = std::move(free_scratch_.back());
  free_scratch_.pop_back();
  return s;
}

void Engine::release_scratch(std::unique_ptr<RunScratch> scratch) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_scratch_.push_back(std::move(scratch));
}

void Engine::run(const Plan& plan, const void* const* inputs, void* const* outputs) {
  run(plan, RunIO::host(plan.inputs.size(), inputs, plan.outputs.size(), outputs));
}

void Engine::run(const Plan& plan, const RunIO& io) {
  if (device_) {
    device_->run(plan, io);
    return;
  }
  std::unique_ptr<RunScratch> scratch = acquire_scratch();
  try {
    execute_host(plan, io, *scratch);
  } catch (...) {
    release_scratch(std::move(scratch));
    throw;
  }
  release_scratch(std::move(scratch));
}

LayerTimes Engine::profile(const Plan& plan, const RunIO& io, int repeat) {
  if (device_) return device_->profile(plan, io, repeat);
  std::unique_ptr<LayerTimer> timer = backend_->layer_timer(plan.layers.size() + 1);
  std::unique_ptr<RunScratch> scratch = acquire_scratch();
  LayerTimes times;
  times.ms.assign(plan.layers.size(), {});
  // Outputs go to the scratch: the caller asked for times only.
  std::vector<HostBuffer> sink(plan.outputs.size());
  RunIO to_sink = io;
  to_sink.outputs.clear();
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    sink[o].reserve(plan.values[plan.outputs[o]].info.bytes());
    to_sink.outputs.push_back(sink[o].data());
  }
  try {
    for (int r = 0; r < repeat; ++r) {
      execute_host(plan, to_sink, *scratch, timer.get());
      for (size_t i = 0; i < plan.layers.size(); ++i) {
        times.ms[i].push_back(plan.layers[i].kernel ? timer->elapsed_ms(i) : 0.0);
      }
    }
  } catch (...) {
    release_scratch(std::move(scratch));
    throw;
  }
  release_scratch(std::move(scratch));
  return times;
}

std::vector<GraphStatus> Engine::graphs() { return device_ ? device_->graphs() : std::vector<GraphStatus>{}; }

}  // namespace dnnx
