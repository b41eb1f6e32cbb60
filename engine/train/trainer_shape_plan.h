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
constexpr size_t pinned_aligned(size_t bytes) { return (bytes + kPinnedAlign - 1) / kPinnedAlign * kPinnedAlign; }

// Note [step io]: on a device a step moves little besides the batch: the learning rate and the
// targets in, the StepStats out. Each shape has a page-locked buffer (ShapePlan::pinned), mapped
// into the device's address space (TrainingOps::allocate_host), laid out as
//   [kPinnedStats]   the StepStats, written there by the step's last kernel (ParamUpdate::sgd);
//   [kPinnedLr]      the lr, which the SGD kernel reads in place;
//   [kPinnedTarget]  the targets, which the loss kernel reads in place when they are small (up to
//                    kMappedTargetBytes: LeNet's 256 labels are 2 KB); larger ones (an LSTM's mse
//                    targets, [T, N, H]) are copied from there to a device buffer before the step,
//                    as a host input is, since every loss kernel reading them over the bus (the
//                    mse reads them twice) would cost more than one DMA;
//   [input_offsets]  each host input, copied from there to the device before the step by DMA
//                    (a device input takes a device-to-device copy instead).
// So a replayed step costs the host a memcpy of the lr and targets, the batch's copy, one graph
// launch and one wait, and the graph holds no copy nodes (each cost ~4 us on an H200, as much
// as the reads over the bus they replace). evaluate() and gradients(), which run no SGD, copy
// the StepStats back with TrainingOps::copy_to_pinned.
constexpr size_t kPinnedStats = 0;
constexpr size_t kPinnedLr = pinned_aligned(sizeof(StepStats));
constexpr size_t kPinnedTarget = kPinnedLr + kPinnedAlign;
constexpr size_t kMappedTargetBytes = size_t{64} << 10;

struct Trainer::ShapePlan {
  std::vector<Shape> shapes;
  // The frozen head: its plan, arena and workspace (backend memory), and its value pointers
  // (bound once at plan time on a device, whose plans keep their inputs in the arena).
  std::shared_ptr<const Plan> head;
  TrainBuffer head_arena, head_workspace;
  CallScratch head_call;
  // The batch in backend memory. On a device each model input is copied to a fixed address
  // (which a recorded step reads), input_dst[m]: the head arena's slot of that input when only
  // the head reads it (head_input_direct), else staging[m], from which the step copies it into
  // the head's arena. On the host the caller's arrays are read in place, pointed at per call.
  std::vector<TrainBuffer> staging;
  std::vector<void*> input_dst;         // per model input (device)
  std::vector<bool> head_input_direct;  // per head input (device)
  std::vector<const void*> inputs;      // per model input, backend memory
  // Note [step io]: the page-locked buffer (device only), and where the kernels read the lr and
  // the targets and the step's StepStats go (device: in `pinned`; host: the trainer's lr, the
  // caller's targets, the trainer's StepStats).
  PinnedBuffer pinned;
  std::vector<size_t> input_offsets;  // per model input, in `pinned`
  TrainBuffer target_buffer;          // device: targets over kMappedTargetBytes
  float* lr = nullptr;
  const void* target = nullptr;
  StepStats* report = nullptr;
  std::unique_ptr<TailPlan> tail;
  std::vector<const void*> tail_inputs;
  std::vector<float*> param_grads;  // per parameter; a zeroed buffer where the loss does not reach it
  std::vector<TrainBuffer> zero_grads;
  std::unique_ptr<ParamUpdate> update;  // the check and SGD over every parameter
  int64_t rows = 0, cols = 0;       // the loss's [N, classes] view of its scores
  // The recorded step (device only).
  std::unique_ptr<DeviceGraph> graph;
  std::string graph_failure;
  // Note [step input copies]: a step's device-resident inputs, to be copied to input_dst by the
  // step itself (the replayed graph's edge copy node, or before the eager work).
  std::vector<EdgeCopy> device_copies;
  GraphStatus status;
};

}  // namespace dnnx
