#include "train/tail_plan.h"

#include <algorithm>
#include <set>

#include "runtime/kernel_registry.h"
#include "runtime/mutable_constants.h"
#include "runtime/plan_folding.h"
#include "train/tail_fusion.h"

namespace dnnx {

namespace {

// Output 0 is input 0's bytes (ops/op.h: OpDef::aliases_input0), and so is its gradient.
bool is_view(const PlannedLayer& layer) {
  const OpDef* def = op_registry().find(*layer.node);
  return def && def->aliases_input0;
}

constexpr size_t kAlign = 64;  // bytes: every buffer starts on a cache line

size_t aligned(size_t bytes, size_t alignment = kAlign) { return (bytes + alignment - 1) / alignment * alignment; }
// Kept memory holds what libraries write (cuDNN's reserve space): each layer's starts on 256 bytes.
constexpr size_t kKeptAlign = 256;

bool is_float(const PlannedValue& v) { return v.info.dtype == DType::Float32; }

// The index in `planned` of node `index` of `tail` (-1 stays -1): the node that writes the same
// first output, since fusing LSTM stacks removes nodes (Note [stacked LSTMs in training]).
int planned_index(const Graph& tail, const Graph& planned, int index) {
  if (index < 0) return -1;
  const std::string& output = tail.nodes.at(static_cast<size_t>(index)).outputs.at(0);
  for (size_t i = 0; i < planned.nodes.size(); ++i) {
    if (!planned.nodes[i].outputs.empty() && planned.nodes[i].outputs[0] == output) return static_cast<int>(i);
  }
  throw InvalidModelError("tensor '" + output + "' is not a value of the trainable tail");
}

}  // namespace

TailPlan::TailPlan(const Graph& tail, const Backend& backend, const TrainingOps& ops,
                   const DeviceConstants* constants, const std::vector<Shape>& input_shapes,
                   const TailOptions& options)
    : ops_(ops),
      backend_(backend),
      graph_(tail_graph_for(tail, input_shapes, backend, TailFusions{options.fuse_lstm_stacks, options.fuse_gemm_relu})),
      plan_([&] {
        // Note [mutable constants]: SGD changes the parameters in place, and nothing that reads
        // one folds
        MutableConstantsScope tuned(options.params);
        // Note [plan-time folding]: the shapes the tail computes from its inputs' shapes (a
        // dynamic export's Shape -> Gather -> Concat -> Reshape) are folded on the host, as an
        // inference plan folds them; they carry no gradient.
        return build_plan(graph_, backend, PlanKey{input_shapes, {}, {}, {}}, constants, folding_host());
      }()) {
  const size_t n_values = plan_->values.size();
  root_.resize(n_values);
  for (size_t id = 0; id < n_values; ++id) root_[id] = static_cast<int>(id);
  for (const PlannedLayer& layer : plan_->layers) {
    if (is_view(layer) && !layer.outputs.empty() && layer.outputs[0] >= 0) {
      root_[layer.outputs[0]] = root_[layer.inputs[0]];
    }
  }
  loss_value_ = value_id(options.loss_value);
  skip_layer_ = planned_index(tail, graph_, options.skip_layer);
  place_activations();
  schedule_backward(backend, options);
}

int TailPlan::value_id(const std::string& name) const {
  for (size_t id = 0; id < plan_->values.size(); ++id) {
    if (plan_->values[id].name == name) return static_cast<int>(id);
  }
  throw InvalidModelError("tensor '" + name + "' is not a value of the trainable tail");
}

void TailPlan::place_activations() {
  const size_t n_values = plan_->values.size();
  activation_offset_.assign(n_values, 0);
  for (size_t id = 0; id < n_values; ++id) {
    const PlannedValue& v = plan_->values[id];
    // The graph inputs (and their views) are read in place from the caller's buffers.
    if (v.storage != Storage::Arena || root_[id] != static_cast<int>(id) || v.input_index >= 0) continue;
    activation_offset_[id] = activation_bytes_;
    activation_bytes_ += aligned(v.info.bytes());
  }
  activations_.reserve(backend_, activation_bytes_);
  ptrs_.assign(n_values, nullptr);
  for (size_t id = 0; id < n_values; ++id) {
    const PlannedValue& v = plan_->values[id];
    if (v.storage == Storage::Arena && v.input_index < 0) ptrs_[id] = activations_.data() + activation_offset_[root_[id]];
    if (v.storage == Storage::Constant) ptrs_[id] = v.data;
  }
}

// Note [gradient fan-in]: a value read by several layers (or twice by one) receives one
// gradient contribution from each. Backward visits layers in reverse, so the first visit to
// a value's gradient (or the loss's seed) writes it, and each later one writes to scratch and
// is added in. Gradient kernels therefore always overwrite, and no buffer is ever zeroed.
void TailPlan::schedule_backward(const Backend& backend, const TailOptions& options) {
  const LayersPlanned layers_planned(backend);  // the gradients' searches (Note [search scratch])
  const size_t n_values = plan_->values.size();
  const std::vector<PlannedValue>& values = plan_->values;
  // needs: depends on a parameter; reaches: the loss depends on it.
  std::vector<bool> needs(n_values, false), reaches(n_values, false);
  for (const std::string& p : options.params) {
    for (size_t id = 0; id < n_values; ++id) {
      if (values[id].name == p && values[id].storage == Storage::Constant) needs[id] = true;
    }
  }
  for (const PlannedLayer& layer : plan_->layers) {
    const bool any = std::any_of(layer.inputs.begin(), layer.inputs.end(), [&](int id) { return id >= 0 && needs[id]; });
    for (int id : layer.outputs) {
      if (id >= 0 && any && is_float(values[id])) needs[id] = true;
    }
  }
  reaches[loss_value_] = true;
  for (size_t l = plan_->layers.size(); l-- > 0;) {
    if (static_cast<int>(l) == skip_layer_) continue;
    const PlannedLayer& layer = plan_->layers[l];
    const bool any = std::any_of(layer.outputs.begin(), layer.outputs.end(), [&](int id) { return id >= 0 && reaches[id]; });
    for (int id : layer.inputs) {
      if (id >= 0 && any) reaches[id] = true;
    }
  }
  if (!needs[loss_value_]) {
    throw InputError("trainable: the loss (on '" + values[loss_value_].name +
                     "') does not depend on any selected parameter");
  }
  std::vector<bool> has_grad(n_values, false);
  for (size_t id = 0; id < n_values; ++id) has_grad[id] = needs[id] && reaches[id] && is_float(values[id]);

  grad_offset_.assign(n_values, -1);
  for (size_t id = 0; id < n_values; ++id) {
    const int r = root_[id];
    if (!has_grad[id] || grad_offset_[r] >= 0) continue;
    grad_offset_[r] = static_cast<int64_t>(grad_floats_);
    grad_floats_ += aligned(values[r].info.bytes()) / sizeof(float);
  }
  grads_.reserve(backend_, grad_floats_ * sizeof(float));
  grad_buf_ = grads_.as<float>();

  workspace_bytes_ = plan_->workspace_bytes;
  forward_step_.assign(plan_->layers.size(), -1);
  std::set<int> written{root_[loss_value_]};
  for (size_t l = plan_->layers.size(); l-- > 0;) {
    const PlannedLayer& layer = plan_->layers[l];
    // A view's gradient is its output's buffer (root_); its kernel, if any, writes only outputs
    // that carry none (Dropout's mask: Note [views with more outputs] in runtime/planner.cc).
    if (static_cast<int>(l) == skip_layer_ || !layer.kernel || is_view(layer)) continue;
    if (std::none_of(layer.outputs.begin(), layer.outputs.end(), [&](int id) { return id >= 0 && has_grad[id]; })) {
      continue;
    }
    const Node& node = *layer.node;
    const GradFactory* factory = backend.kernels().gradient(node);
    if (!factory) {
      node_fail<UnsupportedModelError>(node, "training through " + node.op_type + " is not supported on the " +
                                                 backend.name() + " yet (gradients exist for: " +
                                                 backend.kernels().trainable_joined() + ", and the views)");
    }
    std::vector<ValueInfo> in_infos;
    std::vector<bool> needs_grad;
    for (int id : layer.inputs) {
      in_infos.push_back(id < 0 ? ValueInfo{{}, nullptr, false} : ValueInfo{values[id].info, values[id].constant, true});
      needs_grad.push_back(id >= 0 && has_grad[id]);
    }
    std::vector<TensorInfo> out_infos;
    for (int id : layer.outputs) out_infos.push_back(id < 0 ? TensorInfo{} : values[id].info);
    const OpDef* def = op_registry().find(node);
    const std::string untrainable = def && def->untrainable ? def->untrainable(node, in_infos, needs_grad) : "";
    if (!untrainable.empty()) node_fail<UnsupportedModelError>(node, untrainable);
    GradChoice choice = (*factory)(GradRequest{node, in_infos, out_infos, needs_grad, backend});
    GradStep step;
    step.layer = static_cast<int>(l);
    step.kernel = std::move(choice.kernel);
    step.algorithm = std::move(choice.algorithm);
    step.workspace_bytes = choice.workspace_bytes;
    workspace_bytes_ = std::max(workspace_bytes_, choice.workspace_bytes);
    if (choice.runs_forward) {  // Note [training forward]: the plan shows what the forward runs now
      step.runs_forward = true;
      step.kept_offset = kept_bytes_;
      kept_bytes_ += aligned(choice.kept_bytes, kKeptAlign);
      forward_step_[l] = static_cast<int>(steps_.size());
      PlannedLayer& planned = plan_->layers[l];
      planned.algorithm = std::move(choice.forward_algorithm);
      planned.workspace_bytes = choice.workspace_bytes;
      planned.time_ms = -1;
      planned.rejected.clear();
    }
    size_t temp = 0;
    for (size_t i = 0; i < layer.inputs.size(); ++i) {
      const int id = layer.inputs[i];
      step.d_inputs.push_back(needs_grad[i] ? root_[id] : -1);
      const bool fan_in = needs_grad[i] && !written.insert(root_[id]).second;
      step.via_temp.push_back(fan_in);
      step.temp_offsets.push_back(temp);
      if (fan_in) temp += aligned(values[id].info.bytes()) / sizeof(float);
    }
    temp_floats_ = std::max(temp_floats_, temp);
    steps_.push_back(std::move(step));
  }
  workspace_.reserve(backend_, workspace_bytes_);
  temp_.reserve(backend_, temp_floats_ * sizeof(float));
  kept_.reserve(backend_, kept_bytes_);
}

void TailPlan::run_layer_forward(size_t l) {
  const PlannedLayer& layer = plan_->layers[l];
  call_in_.clear();
  call_out_.clear();
  for (int id : layer.inputs) call_in_.push_back(id < 0 ? nullptr : ptrs_[id]);
  // Outputs are activations this plan owns.
  for (int id : layer.outputs) call_out_.push_back(id < 0 ? nullptr : const_cast<void*>(ptrs_[id]));
  const KernelArgs args{call_in_.data(), call_out_.data(), workspace_.data()};
  if (forward_step_[l] >= 0) {
    const GradStep& step = steps_[static_cast<size_t>(forward_step_[l])];
    step.kernel->forward(args, kept(step));
  } else {
    layer.kernel->run(args);
  }
}

void TailPlan::forward(const void* const* inputs, LayerTimer* timer) {
  for (size_t id = 0; id < plan_->values.size(); ++id) {
    const PlannedValue& v = plan_->values[id];
    if (v.input_index >= 0) ptrs_[id] = inputs[v.input_index];  // a graph input or a view of one
  }
  const size_t n = plan_->layers.size();
  for (size_t l = 0; l < n; ++l) {
    if (timer) timer->mark(l);
    // The final Softmax the loss fuses (skip_layer): the loss reads its input, nothing its output.
    if (plan_->layers[l].kernel && static_cast<int>(l) != skip_layer_) run_layer_forward(l);
  }
  if (timer) timer->mark(n);
}

void TailPlan::backward(LayerTimer* timer) {
  std::vector<const float*> d_out;
  std::vector<float*> d_in;
  float* temp = temp_.as<float>();
  for (size_t k = 0; k < steps_.size(); ++k) {
    if (timer) timer->mark(k);
    const GradStep& step = steps_[k];
    const PlannedLayer& layer = plan_->layers[step.layer];
    call_in_.clear();
    call_out_.clear();
    d_out.clear();
    d_in.clear();
    for (int id : layer.inputs) call_in_.push_back(id < 0 ? nullptr : ptrs_[id]);
    for (int id : layer.outputs) {
      call_out_.push_back(id < 0 ? nullptr : const_cast<void*>(ptrs_[id]));
      d_out.push_back(id < 0 ? nullptr : grad_ptr(id));
    }
    for (size_t i = 0; i < layer.inputs.size(); ++i) {
      if (step.d_inputs[i] < 0) {
        d_in.push_back(nullptr);
      } else {
        d_in.push_back(step.via_temp[i] ? temp + step.temp_offsets[i] : grad_ptr(step.d_inputs[i]));
      }
    }
    step.kernel->run(GradArgs{call_in_.data(), const_cast<const void* const*>(call_out_.data()), d_out.data(),
                              d_in.data(), workspace_.data(), kept(step)});
    for (size_t i = 0; i < layer.inputs.size(); ++i) {
      if (!step.via_temp[i]) continue;
      ops_.accumulate(grad_ptr(step.d_inputs[i]), temp + step.temp_offsets[i],
                      numel(plan_->values[layer.inputs[i]].info.shape));
    }
  }
  if (timer) timer->mark(steps_.size());
}

TailMemory TailPlan::memory() const {
  TailMemory m;
  m.activation_bytes = activation_bytes_;
  m.gradient_bytes = grad_floats_ * sizeof(float);
  m.workspace_bytes = workspace_bytes_ + temp_floats_ * sizeof(float);
  m.kept_bytes = kept_bytes_;
  return m;
}

}  // namespace dnnx
