// Trainer's step: the batch checked and copied in, the work queued (eagerly, or recorded once
// per input shape and replayed: Note [training memory] in train/trainer.h), the StepStats read
// back. Planning and the training state are in trainer.cc.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "train/part_marks.h"
#include "train/trainer.h"
#include "train/trainer_shape_plan.h"

namespace dnnx {

namespace {

std::string infos_str(const Shape& s, DType t) { return TensorInfo{s, t}.str(); }

// A host input goes through page-locked memory in pieces of this size: each piece's DMA runs
// while the host copies the next one in (LeNet at batch 256: 800 KB, four pieces).
constexpr size_t kUploadPiece = size_t{256} << 10;

// `bytes` at `src` (host) to `dst` (device) through `pinned`, piece by piece.
void upload_through(const Backend& backend, void* dst, const void* src, size_t bytes, uint8_t* pinned) {
  for (size_t at = 0; at < bytes; at += kUploadPiece) {
    const size_t piece = std::min(kUploadPiece, bytes - at);
    std::memcpy(pinned + at, static_cast<const uint8_t*>(src) + at, piece);
    copy_to_backend(backend, static_cast<uint8_t*>(dst) + at, pinned + at, piece);
  }
}

}  // namespace

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

// On the host, before anything is queued: a device kernel could not report a bad label.
void Trainer::check_target(const Batch& batch, const ShapePlan& sp) const {
  if (options_.loss == LossKind::CrossEntropy) {
    if (batch.target_info.dtype != DType::Int64 || batch.target_info.shape != Shape{sp.rows}) {
      throw InputError("y: expected integer labels " + infos_str({sp.rows}, DType::Int64) + ", got " +
                       batch.target_info.str());
    }
    const int64_t* labels = static_cast<const int64_t*>(batch.target);
    for (int64_t i = 0; i < sp.rows; ++i) {
      if (labels[i] < 0 || labels[i] >= sp.cols) {
        throw InputError("y: label " + std::to_string(labels[i]) + " at row " + std::to_string(i) +
                         " is outside [0, " + std::to_string(sp.cols) + ") (the model's output has " +
                         std::to_string(sp.cols) + " classes)");
      }
    }
    return;
  }
  const Shape& shape = sp.tail->plan().values[sp.tail->loss_value()].info.shape;
  if (batch.target_info.dtype != DType::Float32 || batch.target_info.shape != shape) {
    throw InputError("y: expected float targets " + infos_str(shape, DType::Float32) + ", got " +
                     batch.target_info.str());
  }
}

Trainer::ShapePlan& Trainer::prepare(const Batch& batch, bool defer_device_copies) {
  check_batch(batch);
  std::vector<Shape> shapes;
  for (const TensorInfo& t : batch.infos) shapes.push_back(t.shape);
  backend_->activate();
  ShapePlan& sp = plan_for(shapes);
  check_target(batch, sp);
  for (uintptr_t stream : batch.streams) device_services(*backend_, "x on a device stream").wait_for_stream(stream);
  sp.device_copies.clear();
  for (size_t m = 0; m < shapes.size(); ++m) {
    const bool on_device = !batch.memory.empty() && batch.memory[m] == Memory::Device;
    if (on_device && !device_) throw InputError("x[" + std::to_string(m) + "]: device memory on a host backend");
    if (!device_) {
      sp.inputs[m] = batch.inputs[m];
      continue;
    }
    // To the input's fixed address (Note [step io]); a host input through page-locked memory.
    const size_t bytes = batch.infos[m].bytes();
    if (on_device && defer_device_copies) {
      sp.device_copies.push_back(EdgeCopy{sp.input_dst[m], batch.inputs[m], bytes});
    } else if (on_device) {
      copy_in_backend(*backend_, sp.input_dst[m], batch.inputs[m], bytes);
    } else {
      upload_through(*backend_, sp.input_dst[m], batch.inputs[m], bytes, sp.pinned.data() + sp.input_offsets[m]);
    }
  }
  if (device_) {
    const size_t bytes = batch.target_info.bytes();
    uint8_t* pinned = sp.pinned.data() + kPinnedTarget;
    if (sp.target == pinned) {
      if (bytes > 0) std::memcpy(pinned, batch.target, bytes);  // read there by the loss kernel
    } else {
      upload_through(*backend_, sp.target_buffer.data(), batch.target, bytes, pinned);
    }
  } else {
    sp.target = batch.target;
  }
  return sp;
}

void Trainer::set_lr(ShapePlan& sp, float lr) {
  *sp.lr = lr;  // host memory either way: the trainer's, or page-locked (read there by SGD)
}

void Trainer::enqueue_copy_out(ShapePlan& sp) const {
  if (sp.report) ops_->copy_to_pinned(sp.report, stats_.data(), sizeof(StepStats));
}

StepStats Trainer::read_stats(const ShapePlan& sp) const {
  StepStats s;
  if (sp.report) {
    backend_->synchronize();
    std::memcpy(&s, sp.report, sizeof(s));
  } else {
    std::memcpy(&s, stats_.data(), sizeof(s));
  }
  return s;
}

void Trainer::enqueue_forward(ShapePlan& sp, bool want_grad, PartMarks* marks) {
  if (head_) {
    const Plan& plan = *sp.head;
    if (!plan.device) {  // the caller's arrays, read in place
      std::vector<const void*> head_in;
      for (int m : split_.head_from_model_input) head_in.push_back(sp.inputs[m]);
      bind_values(plan, sp.head_arena.data(), head_in.data(), sp.head_call.value_ptrs);
    } else {  // bound at plan time; an input the tail reads too comes from its staging buffer
      for (size_t i = 0; i < plan.inputs.size(); ++i) {
        if (sp.head_input_direct[i]) continue;
        const int id = plan.inputs[i];
        copy_in_backend(*backend_, const_cast<void*>(sp.head_call.value_ptrs[id]),
                        sp.inputs[split_.head_from_model_input[i]], plan.values[id].info.bytes());
      }
    }
    run_layers(plan, sp.head_workspace.data(), sp.head_call, marks ? marks->parts(plan.layers.size()) : nullptr);
  }
  for (size_t i = 0; i < split_.tail.inputs.size(); ++i) {
    const int m = split_.tail_from_model_input[i];
    // A head output is read in place from the head's arena (outputs stay live to its end).
    sp.tail_inputs[i] = m >= 0 ? sp.inputs[m]
                               : sp.head_call.value_ptrs[sp.head->outputs[split_.tail_from_head_output[i]]];
  }
  sp.tail->forward(sp.tail_inputs.data(), marks ? marks->parts(sp.tail->plan().layers.size()) : nullptr);
  if (marks) marks->next();
  LossCall call;
  call.kind = options_.loss;
  call.scores = scores_;
  call.y = sp.tail->value(sp.tail->loss_value());
  call.n = sp.rows;
  call.c = sp.cols;
  call.target = sp.target;
  call.d_y = want_grad ? sp.tail->seed() : nullptr;
  ops_->loss(call, stats_.as<StepStats>());
}

void Trainer::enqueue_step(ShapePlan& sp, PartMarks* marks) {
  enqueue_forward(sp, true, marks);
  sp.tail->backward(marks ? marks->parts(sp.tail->steps().size()) : nullptr);
  // Every gradient is checked before any parameter changes (a failed step leaves them all).
  StepStats* stats = stats_.as<StepStats>();
  if (marks) marks->next();
  sp.update->check_finite(sp.lr, stats);
  if (marks) marks->next();
  sp.update->sgd(sp.lr, stats, sp.report);  // the step's last kernel, which also reports
  if (marks) marks->next();
}

// Note [step input copies]: a device-resident batch (a DeviceArray, a torch or CuPy tensor) is
// copied to its fixed address by the step: in a replay by the graph's edge copy node, retargeted
// at the caller's array each time (Note [edge copies] in runtime/device_runner.cc), so that a step
// is one launch and one wait, as a replayed inference run is; eagerly by copies queued before
// the work.
void Trainer::run_step(ShapePlan& sp) {
  // The first step of a shape runs eagerly (the libraries' lazy set-up happens outside any
  // recording); the second records the step, and every later one replays it.
  const bool record = device_ && options_.device_graphs && sp.graph_failure.empty() && sp.status.eager_runs > 0;
  if (record && !sp.graph) {
    try {
      sp.graph = backend_->device()->capture([&] { enqueue_step(sp); }, GraphEdges{graph_.inputs.size(), 0});
      if (sp.graph) ++sp.status.captures;
      else sp.graph_failure = "the " + backend_->name() + " backend records no graphs";
    } catch (const DeviceError& e) {
      sp.graph_failure = e.what();
    }
  }
  if (sp.graph) {
    sp.graph->launch(sp.device_copies, {});
    ++sp.status.replays;
    return;
  }
  for (const EdgeCopy& c : sp.device_copies) copy_in_backend(*backend_, c.dst, c.src, c.bytes);
  enqueue_step(sp);
  ++sp.status.eager_runs;
}

double Trainer::compute_gradients(const Batch& batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  ShapePlan& sp = prepare(batch);
  enqueue_forward(sp, true);
  sp.tail->backward();
  enqueue_copy_out(sp);
  const StepStats s = read_stats(sp);
  if (std::isfinite(s.loss)) {
    for (size_t i = 0; i < options_.params.size(); ++i) {
      std::vector<float>& g = gradient_[options_.params[i]];
      copy_to_host(*backend_, g.data(), sp.param_grads[i], g.size() * sizeof(float));
    }
  }
  return s.loss;
}

double Trainer::step(const Batch& batch, float lr) {
  if (!(lr >= 0.0f) || !std::isfinite(lr)) throw InputError("lr: expected a finite value >= 0, got " + std::to_string(lr));
  std::lock_guard<std::mutex> lock(mutex_);
  ShapePlan& sp = prepare(batch, /*defer_device_copies=*/true);
  set_lr(sp, lr);
  run_step(sp);
  const StepStats s = read_stats(sp);
  host_stale_ = true;
  if (s.non_finite == kLossNotFinite) {
    throw NonFiniteLossError("the loss is " + std::to_string(s.loss) +
                             "; the parameters were left as they were before this step (try a lower lr)");
  }
  if (s.non_finite >= kFirstGradientCode) {
    const std::string& name = options_.params.at(static_cast<size_t>(s.non_finite - kFirstGradientCode));
    throw NonFiniteLossError("the gradient of '" + name + "' is not finite (loss " + std::to_string(s.loss) +
                             "); the parameters were left as they were before this step (try a lower lr)");
  }
  return s.loss;
}

LossValue Trainer::evaluate(const Batch& batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  ShapePlan& sp = prepare(batch);
  enqueue_forward(sp, false);
  enqueue_copy_out(sp);
  const StepStats s = read_stats(sp);
  LossValue v;
  v.loss = s.loss;
  v.correct = s.correct;
  return v;
}

}  // namespace dnnx
