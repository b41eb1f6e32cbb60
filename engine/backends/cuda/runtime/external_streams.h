// Ordering the model's stream after streams it does not own: the streams a DLPack producer or
// consumer names (__dlpack__(stream=...)) and those of __cuda_array_interface__ v3. Those
// protocols pass a stream as an integer: 1 is the legacy default stream, 2 the per-thread
// default stream, anything else a cudaStream_t.
#pragma once
#include <cstdint>

#include "backends/cuda/runtime/cuda_handles.h"

namespace dnnx::cuda {

cudaStream_t external_stream(uintptr_t handle);

// An event with timing off: the cheapest to record and wait for.
inline cudaError_t create_sync_event(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, cudaEventDisableTiming);
}
class SyncEvent : public Owned<cudaEvent_t, cudaError_t, create_sync_event, cudaEventDestroy> {
 public:
  SyncEvent() : Owned("cudaEventCreateWithFlags") {}
};

// Joins external streams into the model's stream. Used under the engine's device turn only
// (one thread at a time), so one event serves every join: a wait takes the event's state at
// the time of the call, and the next record does not disturb it.
class StreamJoiner {
 public:
  StreamJoiner() = default;  // on the current device

  // `waiter` waits for the work queued now on `stream` (an external handle).
  void join(uintptr_t stream, cudaStream_t waiter) const;

  // The stream that device-input producers are asked to order their writes before: a stream of
  // the model's own that no capture ever runs on, so that a producer (from any thread) queues
  // its wait there, and each run joins it under the turn.
  uintptr_t import_stream() const { return reinterpret_cast<uintptr_t>(import_.get()); }

 private:
  CudaStream import_;
  SyncEvent event_;
};

}  // namespace dnnx::cuda
