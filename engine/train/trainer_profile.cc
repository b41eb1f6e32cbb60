// Trainer::profile: the time of each part of a step (every layer of the frozen head and of the
// tail, the loss, every backward step, the check and SGD), from a timer marked
// between the parts (train/part_marks.h). On a device the marked step is recorded as a graph of
// its own and replayed, so that each part's time is its kernels' and not the host's launch gaps.
#include <cmath>

#include "train/part_marks.h"
#include "train/trainer.h"
#include "train/trainer_shape_plan.h"

namespace dnnx {

std::vector<StepPart> Trainer::profile_parts(const ShapePlan& sp) const {
  std::vector<StepPart> parts;
  auto add = [&parts](const std::string& name, const std::string& op, const std::string& algorithm,
                      const char* stage) { parts.push_back(StepPart{name, op, algorithm, stage, {}}); };
  if (sp.head) {
    for (const PlannedLayer& layer : sp.head->layers) {
      add(layer.node->name, layer.node->op_type, layer.algorithm, "frozen");
    }
  }
  const Plan& tail = sp.tail->plan();
  for (size_t l = 0; l < tail.layers.size(); ++l) {
    const PlannedLayer& layer = tail.layers[l];
    add(layer.node->name, layer.node->op_type,
        static_cast<int>(l) == sp.tail->skip_layer() ? "not run (fused into the loss)" : layer.algorithm, "forward");
  }
  add("loss", options_.loss == LossKind::CrossEntropy ? "cross_entropy" : "mse", "loss kernel", "loss");
  for (const GradStep& step : sp.tail->steps()) {
    const Node& node = *tail.layers[step.layer].node;
    add(node.name, node.op_type + " backward", step.algorithm, "backward");
  }
  add("check", "non-finite check", device_ ? "every gradient at once" : "every gradient", "update");
  add("sgd", "SGD update", device_ ? "every parameter at once, then the loss and flags to the host"
                                    : "every parameter", "update");
  return parts;
}

StepProfile Trainer::profile(const Batch& batch, float lr, int repeat) {
  if (repeat < 1) throw InputError("repeat: expected at least 1, got " + std::to_string(repeat));
  if (!(lr >= 0.0f) || !std::isfinite(lr)) {
    throw InputError("lr: expected a finite value >= 0, got " + std::to_string(lr));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ShapePlan& sp = prepare(batch);
  set_lr(sp, lr);
  // What the timed steps change, put back at the end.
  const size_t n = options_.params.size();
  std::vector<TrainBuffer> saved(2 * n);
  for (size_t i = 0; i < n; ++i) {
    const size_t bytes = float_bytes(*params_[options_.params[i]]);
    saved[2 * i].reserve(*backend_, bytes);
    saved[2 * i + 1].reserve(*backend_, bytes);
    copy_in_backend(*backend_, saved[2 * i].data(), param_ptr(i), bytes);
    copy_in_backend(*backend_, saved[2 * i + 1].data(), velocity_[i].data(), bytes);
  }
  auto restore = [&] {
    for (size_t i = 0; i < n; ++i) {
      const size_t bytes = float_bytes(*params_[options_.params[i]]);
      copy_in_backend(*backend_, param_ptr(i), saved[2 * i].data(), bytes);
      copy_in_backend(*backend_, velocity_[i].data(), saved[2 * i + 1].data(), bytes);
    }
    backend_->synchronize();
  };
  StepProfile out;
  out.parts = profile_parts(sp);
  try {
    std::unique_ptr<LayerTimer> timer = backend_->layer_timer(out.parts.size() + 1);
    auto marked_step = [&] {
      PartMarks marks(*timer);
      enqueue_step(sp, &marks);
    };
    enqueue_step(sp);  // untimed: the libraries' lazy set-up happens outside any recording
    read_stats(sp);
    std::unique_ptr<DeviceGraph> graph;
    if (device_ && options_.device_graphs) {
      try {
        graph = backend_->device()->capture(marked_step);
      } catch (const DeviceError&) {
        graph.reset();  // timed eagerly below, where a failure that is not the capture's shows
      }
    }
    out.graph = graph != nullptr;
    for (int r = 0; r < repeat; ++r) {
      if (graph) graph->launch();
      else marked_step();
      read_stats(sp);
      for (size_t k = 0; k < out.parts.size(); ++k) out.parts[k].ms.push_back(timer->elapsed_ms(k));
    }
  } catch (...) {
    restore();
    throw;
  }
  restore();
  return out;
}

}  // namespace dnnx
