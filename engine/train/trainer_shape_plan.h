// What Trainer keeps per input shape (the head's plan and buffers, the batch's staging, the
// TailPlan, the recorded step), shared by trainer.cc (planning, state) and trainer_step.cc (the
// step itself). Internal to engine/train.
#pragma once
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "train/trainer.h"

namespace dnnx {

inline size_t float_bytes(const ConstTensor& t) { return static_cast<size_t>(numel(t.info.shape)) * sizeof(float); }

constexpr size_t kPinnedAlign = 64;
inline size_t pinned_aligned(size_t bytes) { return (bytes + kPinnedAlign - 1) / kPinnedAlign * kPinnedAlign; }

// What a step hands over in page-locked memory besides the batch (Trainer::step_io_).
struct StepIo {
  StepStats stats;
  float lr = 0;
};

struct Trainer::ShapePlan {
  std::vector<Shape> shapes;
  // The frozen head: its plan, arena and workspace (backend memory), and its value pointers.
  std::shared_ptr<const Plan> head;
  TrainBuffer head_arena, head_workspace;
  CallScratch head_call;
  // The batch in backend memory: on a device one buffer per model input and one for the
  // targets (fixed addresses, so that a recorded step reads the next batch); on the host the
  // caller's arrays, pointed at per call.
  std::vector<TrainBuffer> staging;
  TrainBuffer target_buffer;
  // Page-locked host copies of the host inputs and the targets (empty where the ops give none):
  // input m at pinned_offsets[m], the targets at pinned_offsets.back().
  PinnedBuffer pinned;
  std::vector<size_t> pinned_offsets;
  std::vector<const void*> inputs;  // per model input, backend memory
  const void* target = nullptr;
  std::unique_ptr<TailPlan> tail;
  std::vector<const void*> tail_inputs;
  std::vector<float*> param_grads;  // per parameter; a zeroed buffer where the loss does not reach it
  std::vector<TrainBuffer> zero_grads;
  int64_t rows = 0, cols = 0;       // the loss's [N, classes] view of its scores
  // The recorded step (device only).
  std::unique_ptr<DeviceGraph> graph;
  std::string graph_failure;
  GraphStatus status;
};

}  // namespace dnnx
