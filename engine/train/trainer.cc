// Trainer: construction, planning per input shape, and the training state (weights, momentum,
// gradients, memory, plans, graphs); the step itself is in trainer_step.cc.
#include "train/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "runtime/plan_folding.h"
#include "train/trainer_shape_plan.h"

namespace dnnx {

Trainer::Trainer(const Graph& graph, TrainerOptions options, std::unique_ptr<Backend> backend)
    : graph_(graph), options_(std::move(options)) {
  check_sgd_options(options_.sgd);
  ops_ = backend->training_ops();
  if (!ops_) throw DeviceError("finetune: the " + backend->name() + " backend cannot train");
  device_ = !backend->uses_host_memory();
  // With the folding host, as an inference engine validates: what folds at plan time (a dynamic
  // export's Shape chain, Note [shapes in the tail]) needs no device kernel.
  validate_graph(graph_, *backend, folding_host());
  for (const Node& node : graph_.nodes) {  // Note [staged plans]: the trainer plans whole graphs only
    if (op_registry().find(node)->value_shaped) {
      node_fail<UnsupportedModelError>(node, "fine-tuning: its output shapes (or its subgraphs) are decided at run "
                                             "time; such models run but do not fine-tune");
    }
  }
  split_ = split_at_first_trainable(graph_, std::set<std::string>(options_.params.begin(), options_.params.end()));
  // The tail trains private copies of the parameters; the head never reads them.
  for (const std::string& name : options_.params) {
    auto copy = std::make_shared<ConstTensor>(*graph_.constants.at(name));
    split_.tail.constants[name] = copy;
    params_[name] = copy;
    gradient_[name].assign(static_cast<size_t>(numel(copy->info.shape)), 0.0f);
  }
  if (!split_.head.nodes.empty()) {
    // The head plans on the trainer's backend (one stream on a device); its runs are the
    // trainer's own (enqueue_forward), never the Engine's, so it records no graphs itself.
    //
    // Note [bf16 fine-tuning]: under precision="bf16" the head is an Engine like any other, so
    // the half_storage pass makes it store bfloat16 with tensor-op math (its weights rounded once,
    // here: they are frozen), and its outputs, the tail's inputs, come back as float32 through the
    // pass's exit Casts. The tail trains the parameters themselves (float32 master weights: the
    // private copies above), forward and backward in float32 with fp32 math, and SGD updates
    // them in float32; only the model's inference engine, rebuilt after a step
    // (python/dnnx/model.py), rounds the tuned weights to bfloat16 again. So bf16 speeds the part
    // of a fine-tuning step that is frozen (most of it for trainable="last:N") and costs the
    // trained layers no precision. fp16 stays inference-only: its range does not hold gradients
    // without loss scaling (python/dnnx/model.py refuses it).
    EngineOptions head_options;
    head_options.device_graphs = false;
    head_ = std::make_unique<Engine>(split_.head, std::move(backend), options_.head_passes, head_options);
    backend_ = &head_->backend();
    if (!head_->value_inputs().empty()) {
      throw UnsupportedModelError("fine-tuning: input '" + split_.head.inputs[head_->value_inputs()[0]].name +
                                  "' decides shapes by its value (a run-time shape input); such models run but do "
                                  "not fine-tune");
    }
    std::shared_ptr<const Plan> plan = head_->plan_for(head_->default_shapes());
    for (size_t i = 0; i < split_.tail.inputs.size(); ++i) {
      const int k = split_.tail_from_head_output[i];
      if (k >= 0) split_.tail.inputs[i].dtype = plan->values[plan->outputs[k]].info.dtype;
    }
  } else {
    owned_ = std::move(backend);
    backend_ = owned_.get();
  }
  if (device_) tail_constants_ = std::make_unique<DeviceConstants>(split_.tail, *backend_);
  velocity_.resize(options_.params.size());
  for (size_t i = 0; i < options_.params.size(); ++i) {
    const size_t bytes = float_bytes(*params_[options_.params[i]]);
    velocity_[i].reserve(*backend_, bytes);
    zero_in_backend(*backend_, velocity_[i].data(), bytes);
  }
  stats_.reserve(*backend_, sizeof(StepStats));
  zero_in_backend(*backend_, stats_.data(), sizeof(StepStats));
  if (!device_) lr_.reserve(*backend_, sizeof(float));
  // The loss reads the final node's output, or a final Softmax's input (fused, stable).
  const Node& last = split_.tail.nodes.back();
  loss_value_ = graph_.outputs[0];
  const bool ends_in_output = last.has_output(0) && last.outputs[0] == graph_.outputs[0];
  if (options_.loss == LossKind::CrossEntropy && options_.scores_are_log_probs) {
    scores_ = ScoreKind::LogProbs;
  } else if (options_.loss == LossKind::CrossEntropy && ends_in_output) {
    if (last.op_type == "Softmax") {
      const int64_t axis = last.attr_int("axis", last.opset >= 13 ? -1 : 1);
      if (axis != 1 && axis != -1) {
        node_fail<UnsupportedModelError>(last, "cross_entropy fuses the final Softmax over the class axis; axis " +
                                                   std::to_string(axis) + " is not supported (1 or -1)");
      }
      loss_value_ = last.inputs[0];
      skip_layer_ = static_cast<int>(split_.tail.nodes.size()) - 1;
    } else if (last.op_type == "LogSoftmax") {
      scores_ = ScoreKind::LogProbs;
    }
  }
  plan_for(default_shapes());  // every load-time error (a layer without a gradient) shows now
}

Trainer::~Trainer() = default;


std::vector<Shape> Trainer::default_shapes() const {
  return default_input_shapes(graph_);
}

float* Trainer::param_ptr(size_t i) const {
  const ConstTensor& t = *params_.at(options_.params[i]);
  // On the host the tail reads the host copy in place; on a device its upload.
  if (!device_) return const_cast<ConstTensor&>(t).as_mut<float>();
  return static_cast<float*>(const_cast<void*>(tail_constants_->find(t)));
}

Trainer::ShapePlan& Trainer::plan_for(const std::vector<Shape>& shapes) {
  auto it = plans_.find(shapes);
  if (it != plans_.end()) return *it->second;
  auto sp = std::make_unique<ShapePlan>();
  sp->shapes = shapes;
  sp->status.input_shapes = shapes;
  sp->inputs.assign(shapes.size(), nullptr);
  std::vector<Shape> tail_shapes(split_.tail.inputs.size());
  if (head_) {
    std::vector<Shape> head_shapes;
    for (int m : split_.head_from_model_input) head_shapes.push_back(shapes[m]);
    sp->head = head_->plan_for(head_shapes);
    sp->head_arena.reserve(*backend_, sp->head->arena_bytes);
    sp->head_workspace.reserve(*backend_, sp->head->workspace_bytes);
  }
  for (size_t i = 0; i < tail_shapes.size(); ++i) {
    const int m = split_.tail_from_model_input[i];
    tail_shapes[i] = m >= 0 ? shapes[m] : sp->head->values[sp->head->outputs[split_.tail_from_head_output[i]]].info.shape;
  }
  sp->tail = std::make_unique<TailPlan>(split_.tail, *backend_, *ops_, tail_constants_.get(), tail_shapes,
                                        TailOptions{options_.params, loss_value_, skip_layer_,
                                                    options_.head_passes.fuse_lstm_stack,
                                                    options_.head_passes.fuse_gemm_relu});
  sp->tail_inputs.assign(split_.tail.inputs.size(), nullptr);
  const PlannedValue& scores = sp->tail->plan().values[sp->tail->loss_value()];
  sp->rows = scores.info.shape.empty() ? 1 : scores.info.shape[0];
  sp->cols = sp->rows > 0 ? numel(scores.info.shape) / sp->rows : 0;
  if (options_.loss == LossKind::CrossEntropy && scores.info.shape.size() != 2) {
    throw UnsupportedModelError("loss cross_entropy: the scores '" + scores.name + "' are " +
                                shape_str(scores.info.shape) + "; expected [N, classes]");
  }
  const size_t target_bytes = options_.loss == LossKind::CrossEntropy ? sp->rows * sizeof(int64_t)
                                                                        : scores.info.bytes();
  if (device_) {
    plan_device_io(*sp, target_bytes);
  } else {
    sp->lr = lr_.as<float>();  // the targets are the caller's, the StepStats read where they are
  }
  sp->zero_grads.resize(options_.params.size());
  std::vector<ParamSlot> slots;
  for (size_t i = 0; i < options_.params.size(); ++i) {
    float* g = sp->tail->grad(sp->tail->value_id(options_.params[i]));
    const size_t bytes = float_bytes(*params_[options_.params[i]]);
    if (!g) {  // the loss does not reach this parameter: its gradient is 0 (decay and momentum still act)
      sp->zero_grads[i].reserve(*backend_, bytes);
      zero_in_backend(*backend_, sp->zero_grads[i].data(), bytes);
      g = sp->zero_grads[i].as<float>();
    }
    sp->param_grads.push_back(g);
    slots.push_back(ParamSlot{param_ptr(i), g, velocity_[i].as<float>(), static_cast<int64_t>(bytes / sizeof(float))});
  }
  sp->update = ops_->plan_update(options_.sgd, slots);
  return *plans_.emplace(shapes, std::move(sp)).first->second;
}

// Note [step io] in train/trainer_shape_plan.h: where each input goes, and the page-locked
// buffer. A model input only the head reads is copied straight into its slot of the head's
// arena (bound here, once: a device plan keeps its inputs in its arena).
void Trainer::plan_device_io(ShapePlan& sp, size_t target_bytes) {
  const size_t n_inputs = sp.shapes.size();
  sp.staging.resize(n_inputs);
  sp.input_dst.assign(n_inputs, nullptr);
  if (head_) {
    const Plan& plan = *sp.head;
    const std::vector<const void*> no_host_inputs(plan.inputs.size(), nullptr);
    bind_values(plan, sp.head_arena.data(), no_host_inputs.data(), sp.head_call.value_ptrs);
    sp.head_input_direct.assign(plan.inputs.size(), false);
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
      const int m = split_.head_from_model_input[i];
      const auto& heads = split_.head_from_model_input;
      const auto& tails = split_.tail_from_model_input;
      const bool head_only = std::count(heads.begin(), heads.end(), m) == 1 &&
                             std::find(tails.begin(), tails.end(), m) == tails.end();
      if (!head_only) continue;
      sp.head_input_direct[i] = true;
      sp.input_dst[m] = const_cast<void*>(sp.head_call.value_ptrs[plan.inputs[i]]);  // an arena value
    }
  }
  size_t pinned_bytes = pinned_aligned(kPinnedTarget + target_bytes);
  for (size_t m = 0; m < n_inputs; ++m) {
    const size_t bytes = TensorInfo{sp.shapes[m], graph_.inputs[m].dtype}.bytes();
    if (!sp.input_dst[m]) {
      sp.staging[m].reserve(*backend_, bytes);
      sp.input_dst[m] = sp.staging[m].data();
    }
    sp.inputs[m] = sp.input_dst[m];
    sp.input_offsets.push_back(pinned_bytes);
    pinned_bytes += pinned_aligned(bytes);
  }
  sp.pinned.reserve(*ops_, pinned_bytes);
  if (!sp.pinned.data()) throw DeviceError("finetune: the " + backend_->name() + " backend gave no page-locked memory");
  sp.lr = reinterpret_cast<float*>(sp.pinned.data() + kPinnedLr);
  sp.target = sp.pinned.data() + kPinnedTarget;
  if (target_bytes > kMappedTargetBytes) {
    sp.target_buffer.reserve(*backend_, target_bytes);
    sp.target = sp.target_buffer.data();
  }
  sp.report = reinterpret_cast<StepStats*>(sp.pinned.data() + kPinnedStats);
}

void Trainer::refresh_host_weights() {
  if (!host_stale_) return;
  if (device_) {
    for (size_t i = 0; i < options_.params.size(); ++i) {
      ConstTensor& t = *params_[options_.params[i]];
      copy_to_host(*backend_, t.as_mut<float>(), param_ptr(i), float_bytes(t));
    }
  }
  host_stale_ = false;
}

const ConstTensor& Trainer::weight(const std::string& name) {
  auto it = params_.find(name);
  if (it == params_.end()) throw InputError("parameter '" + name + "' is not trained by this tuner");
  refresh_host_weights();
  return *it->second;
}

namespace {

size_t index_of(const std::vector<std::string>& names, const std::string& name) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return i;
  }
  throw InputError("parameter '" + name + "' is not trained by this tuner");
}

}  // namespace

std::vector<float> Trainer::velocity(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t i = index_of(options_.params, name);
  std::vector<float> out(static_cast<size_t>(numel(params_[name]->info.shape)));
  copy_to_host(*backend_, out.data(), velocity_[i].data(), out.size() * sizeof(float));
  return out;
}

const std::vector<float>& Trainer::gradient(const std::string& name) {
  index_of(options_.params, name);
  return gradient_.at(name);
}

void Trainer::set_weight(const std::string& name, const float* data, size_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t i = index_of(options_.params, name);
  refresh_host_weights();
  ConstTensor& w = *params_.at(name);
  if (count != static_cast<size_t>(numel(w.info.shape))) {
    throw InputError("parameter '" + name + "': expected " + std::to_string(numel(w.info.shape)) + " values " +
                     shape_str(w.info.shape) + ", got " + std::to_string(count));
  }
  std::memcpy(w.as_mut<float>(), data, count * sizeof(float));
  if (device_) {
    copy_to_backend(*backend_, param_ptr(i), data, count * sizeof(float));
    backend_->synchronize();
  }
}

void Trainer::set_velocity(const std::string& name, const float* data, size_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t i = index_of(options_.params, name);
  const size_t expected = static_cast<size_t>(numel(params_[name]->info.shape));
  if (count != expected) {
    throw InputError("momentum buffer of '" + name + "': expected " + std::to_string(expected) + " values, got " +
                     std::to_string(count));
  }
  copy_to_backend(*backend_, velocity_[i].data(), data, count * sizeof(float));
  backend_->synchronize();
}

TrainerMemory Trainer::memory(const std::vector<Shape>& shapes) {
  std::lock_guard<std::mutex> lock(mutex_);
  backend_->activate();
  ShapePlan& sp = plan_for(shapes);
  TrainerMemory m;
  m.head_arena_bytes = sp.head ? sp.head->arena_bytes + sp.head->workspace_bytes : 0;
  m.tail = sp.tail->memory();
  for (const auto& kv : params_) m.optimizer_bytes += 2 * float_bytes(*kv.second);
  m.keep_everything_bytes = build_plan(graph_, *backend_, PlanKey{shapes, {}, {}, {}})->naive_bytes;
  return m;
}

Trainer::Plans Trainer::plans(const std::vector<Shape>& shapes) {
  std::lock_guard<std::mutex> lock(mutex_);
  backend_->activate();
  ShapePlan& sp = plan_for(shapes);
  return Plans{sp.head.get(), sp.tail.get()};
}

std::vector<GraphStatus> Trainer::graphs() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<GraphStatus> out;
  if (!device_) return out;
  for (const auto& kv : plans_) {
    if (kv.second->status.eager_runs + kv.second->status.replays == 0) continue;  // planned, never stepped
    GraphStatus s = kv.second->status;
    if (!options_.device_graphs) s.state = "off";
    else if (!kv.second->graph_failure.empty()) s.state = "failed: " + kv.second->graph_failure;
    else s.state = kv.second->graph ? "captured" : "pending";
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace dnnx
