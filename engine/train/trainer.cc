#include "train/trainer.h"

#include <cmath>
#include <cstring>
#include <set>

namespace dnnx {

namespace {

std::string infos_str(const Shape& s, DType t) { return TensorInfo{s, t}.str(); }

bool all_finite(const std::vector<float>& v) {
  for (float x : v) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

}  // namespace

struct Trainer::ShapePlan {
  std::shared_ptr<const Plan> head;   // null without a head
  std::vector<HostBuffer> boundary;   // one per head output
  std::unique_ptr<TailPlan> tail;
};

Trainer::Trainer(const Graph& graph, TrainerOptions options, std::unique_ptr<Backend> head_backend,
                 std::unique_ptr<Backend> tail_backend, std::unique_ptr<GradRegistry> grads)
    : graph_(graph), options_(std::move(options)), tail_backend_(std::move(tail_backend)), grads_(std::move(grads)) {
  check_sgd_options(options_.sgd);
  validate_graph(graph_, *tail_backend_);
  split_ = split_at_first_trainable(graph_, std::set<std::string>(options_.params.begin(), options_.params.end()));
  // The tail trains private copies of the parameters; the head never reads them.
  for (const std::string& name : options_.params) {
    auto copy = std::make_shared<ConstTensor>(*graph_.constants.at(name));
    split_.tail.constants[name] = copy;
    params_[name] = copy;
    velocity_[name].assign(static_cast<size_t>(numel(copy->info.shape)), 0.0f);
    gradient_[name].assign(velocity_[name].size(), 0.0f);
  }
  if (!split_.head.nodes.empty()) {
    head_ = std::make_unique<Engine>(split_.head, std::move(head_backend), options_.head_passes);
    std::shared_ptr<const Plan> plan = head_->plan_for(head_->default_shapes());
    for (size_t i = 0; i < split_.tail.inputs.size(); ++i) {
      const int k = split_.tail_from_head_output[i];
      if (k >= 0) split_.tail.inputs[i].dtype = plan->values[plan->outputs[k]].info.dtype;
    }
  }
  // The loss reads the final node's output, or a final Softmax's input (fused, stable).
  const Node& last = split_.tail.nodes.back();
  loss_value_ = graph_.outputs[0];
  const bool ends_in_output = last.has_output(0) && last.outputs[0] == graph_.outputs[0];
  if (options_.loss == LossKind::CrossEntropy && ends_in_output) {
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

Trainer::ShapePlan& Trainer::plan_for(const std::vector<Shape>& shapes) {
  auto it = plans_.find(shapes);
  if (it != plans_.end()) return *it->second;
  auto sp = std::make_unique<ShapePlan>();
  std::vector<Shape> tail_shapes(split_.tail.inputs.size());
  if (head_) {
    std::vector<Shape> head_shapes;
    for (int m : split_.head_from_model_input) head_shapes.push_back(shapes[m]);
    sp->head = head_->plan_for(head_shapes);
    sp->boundary.resize(sp->head->outputs.size());
    for (size_t k = 0; k < sp->boundary.size(); ++k) sp->boundary[k].reserve(sp->head->values[sp->head->outputs[k]].info.bytes());
  }
  for (size_t i = 0; i < tail_shapes.size(); ++i) {
    const int m = split_.tail_from_model_input[i];
    tail_shapes[i] = m >= 0 ? shapes[m] : sp->head->values[sp->head->outputs[split_.tail_from_head_output[i]]].info.shape;
  }
  sp->tail = std::make_unique<TailPlan>(split_.tail, *tail_backend_, *grads_, tail_shapes,
                                        TailOptions{options_.params, loss_value_, skip_layer_});
  return *plans_.emplace(shapes, std::move(sp)).first->second;
}

void Trainer::check_batch(const Batch& batch) const {
  if (batch.infos.size() != graph_.inputs.size()) {
    throw InputError("x: expected " + std::to_string(graph_.inputs.size()) + " input array(s), got " +
                     std::to_string(batch.infos.size()));
  }
  for (size_t i = 0; i < batch.infos.size(); ++i) {
    const GraphInput& in = graph_.inputs[i];
    const TensorInfo& got = batch.infos[i];
    bool ok = got.dtype == in.dtype && got.shape.size() == in.dims.size();
    for (size_t d = 0; ok && d < in.dims.size(); ++d) ok = in.dims[d] < 0 ? got.shape[d] >= 1 : got.shape[d] == in.dims[d];
    if (!ok) {
      throw InputError("x: input '" + in.name + "': expected " + in.dims_str() + " " + dtype_name(in.dtype) +
                       ", got " + got.str());
    }
  }
}

LossValue Trainer::forward_and_loss(const Batch& batch, ShapePlan& sp, bool want_grad) {
  if (head_) {
    std::vector<const void*> in;
    std::vector<void*> out;
    for (int m : split_.head_from_model_input) in.push_back(batch.inputs[m]);
    for (HostBuffer& b : sp.boundary) out.push_back(b.data());
    head_->run(*sp.head, in.data(), out.data());
  }
  std::vector<const void*> tail_in;
  for (size_t i = 0; i < split_.tail.inputs.size(); ++i) {
    const int m = split_.tail_from_model_input[i];
    tail_in.push_back(m >= 0 ? batch.inputs[m] : sp.boundary[split_.tail_from_head_output[i]].data());
  }
  sp.tail->forward(tail_in.data());

  const int id = sp.tail->loss_value();
  const Shape& shape = sp.tail->plan().values[id].info.shape;
  const int64_t rows = shape.empty() ? 1 : shape[0];
  const int64_t cols = rows > 0 ? numel(shape) / rows : 0;
  float* d = want_grad ? sp.tail->seed() : nullptr;
  if (options_.loss == LossKind::CrossEntropy) {
    if (shape.size() != 2) {
      throw UnsupportedModelError("loss cross_entropy: the scores '" + sp.tail->plan().values[id].name + "' are " +
                                  shape_str(shape) + "; expected [N, classes]");
    }
    if (batch.target_info.dtype != DType::Int64 || batch.target_info.shape != Shape{rows}) {
      throw InputError("y: expected integer labels " + infos_str({rows}, DType::Int64) + ", got " +
                       batch.target_info.str());
    }
    return cross_entropy(scores_, sp.tail->value(id), rows, cols, static_cast<const int64_t*>(batch.target), d);
  }
  if (batch.target_info.dtype != DType::Float32 || batch.target_info.shape != shape) {
    throw InputError("y: expected float targets " + infos_str(shape, DType::Float32) + ", got " +
                     batch.target_info.str());
  }
  return mean_squared_error(sp.tail->value(id), static_cast<const float*>(batch.target), rows, cols, d);
}

void Trainer::collect_gradients(ShapePlan& sp) {
  for (const std::string& name : options_.params) {
    std::vector<float>& g = gradient_[name];
    const float* src = sp.tail->grad(sp.tail->value_id(name));
    if (src) {
      std::memcpy(g.data(), src, g.size() * sizeof(float));
    } else {
      std::fill(g.begin(), g.end(), 0.0f);  // the loss does not reach this parameter
    }
  }
}

double Trainer::compute_gradients(const Batch& batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  check_batch(batch);
  std::vector<Shape> shapes;
  for (const TensorInfo& t : batch.infos) shapes.push_back(t.shape);
  ShapePlan& sp = plan_for(shapes);
  const LossValue lv = forward_and_loss(batch, sp, true);
  if (std::isfinite(lv.loss)) {
    sp.tail->backward();
    collect_gradients(sp);
  }
  return lv.loss;
}

double Trainer::step(const Batch& batch, float lr) {
  if (!(lr >= 0.0f) || !std::isfinite(lr)) throw InputError("lr: expected a finite value >= 0, got " + std::to_string(lr));
  const double loss = compute_gradients(batch);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!std::isfinite(loss)) {
    throw NonFiniteLossError("the loss is " + std::to_string(loss) +
                             "; the parameters were left as they were before this step (try a lower lr)");
  }
  for (const std::string& name : options_.params) {
    if (!all_finite(gradient_[name])) {
      throw NonFiniteLossError("the gradient of '" + name + "' is not finite (loss " + std::to_string(loss) +
                               "); the parameters were left as they were before this step (try a lower lr)");
    }
  }
  for (const std::string& name : options_.params) {
    ConstTensor& w = *params_[name];
    sgd_update(options_.sgd, lr, w.as_mut<float>(), gradient_[name].data(), velocity_[name].data(),
               static_cast<int64_t>(gradient_[name].size()));
  }
  return loss;
}

LossValue Trainer::evaluate(const Batch& batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  check_batch(batch);
  std::vector<Shape> shapes;
  for (const TensorInfo& t : batch.infos) shapes.push_back(t.shape);
  return forward_and_loss(batch, plan_for(shapes), false);
}

const ConstTensor& Trainer::weight(const std::string& name) const {
  auto it = params_.find(name);
  if (it == params_.end()) throw InputError("parameter '" + name + "' is not trained by this tuner");
  return *it->second;
}

const std::vector<float>& Trainer::velocity(const std::string& name) const {
  weight(name);
  return velocity_.at(name);
}

const std::vector<float>& Trainer::gradient(const std::string& name) const {
  weight(name);
  return gradient_.at(name);
}

void Trainer::set_weight(const std::string& name, const float* data, size_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  weight(name);  // InputError for a name this tuner does not train
  ConstTensor& w = *params_.at(name);
  if (count != static_cast<size_t>(numel(w.info.shape))) {
    throw InputError("parameter '" + name + "': expected " + std::to_string(numel(w.info.shape)) + " values " +
                     shape_str(w.info.shape) + ", got " + std::to_string(count));
  }
  std::memcpy(w.as_mut<float>(), data, count * sizeof(float));
}

void Trainer::set_velocity(const std::string& name, const float* data, size_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  weight(name);  // InputError for a name this tuner does not train
  std::vector<float>& v = velocity_.at(name);
  if (count != v.size()) {
    throw InputError("momentum buffer of '" + name + "': expected " + std::to_string(v.size()) + " values, got " +
                     std::to_string(count));
  }
  std::memcpy(v.data(), data, count * sizeof(float));
}

TrainerMemory Trainer::memory(const std::vector<Shape>& shapes) {
  std::lock_guard<std::mutex> lock(mutex_);
  ShapePlan& sp = plan_for(shapes);
  TrainerMemory m;
  m.head_arena_bytes = sp.head ? sp.head->arena_bytes + sp.head->workspace_bytes : 0;
  m.tail = sp.tail->memory();
  for (const auto& kv : velocity_) m.optimizer_bytes += 2 * kv.second.size() * sizeof(float);
  m.keep_everything_bytes = build_plan(graph_, *tail_backend_, shapes)->naive_bytes;
  return m;
}

}  // namespace dnnx
