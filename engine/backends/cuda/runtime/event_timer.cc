#include "backends/cuda/runtime/event_timer.h"

#include <vector>

namespace dnnx::cuda {

namespace {

inline cudaError_t create_timing_event(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }
class TimingEvent : public Owned<cudaEvent_t, cudaError_t, create_timing_event, cudaEventDestroy> {
 public:
  TimingEvent() : Owned("cudaEventCreateWithFlags") {}
};

class EventTimer final : public LayerTimer {
 public:
  EventTimer(cudaStream_t stream, size_t marks) : stream_(stream), events_(marks) {}

  void mark(size_t i) override {
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    check(cudaStreamIsCapturing(stream_, &capturing), "cudaStreamIsCapturing");
    const unsigned flags = capturing == cudaStreamCaptureStatusActive ? cudaEventRecordExternal : cudaEventRecordDefault;
    check(cudaEventRecordWithFlags(events_.at(i), stream_, flags), "cudaEventRecordWithFlags");
  }

  double elapsed_ms(size_t i) const override {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, events_.at(i), events_.at(i + 1)), "cudaEventElapsedTime");
    return ms;
  }

 private:
  cudaStream_t stream_;
  std::vector<TimingEvent> events_;
};

}  // namespace

std::unique_ptr<LayerTimer> make_event_timer(cudaStream_t stream, size_t marks) {
  return std::make_unique<EventTimer>(stream, marks);
}

}  // namespace dnnx::cuda
