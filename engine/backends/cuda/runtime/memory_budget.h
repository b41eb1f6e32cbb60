// Note [memory limit]: load(..., memory_limit=...) caps what one model holds on its GPU. Every
// allocation the model's CUDA backend makes takes its bytes from the budget first: the
// constants, the run arena and workspace (DeviceServices::allocate), the planner's search
// buffers (try_plan_alloc: a candidate whose workspace does not fit is rejected like an
// out-of-memory one) and the kernels' own buffers (device_alloc). One that would pass the limit
// fails as a DeviceError naming what it was for, the bytes, the limit and what the model holds;
// a plan whose arena and workspace alone exceed it is refused before anything is allocated (the
// limit stands in for the device's memory in Note [absurd sizes]). Arrays handed to the caller
// (run(output="device")) are the caller's and not counted.
#pragma once
#include <atomic>
#include <cstddef>
#include <string>

namespace dnnx::cuda {

class MemoryBudget {
 public:
  explicit MemoryBudget(size_t limit) : limit_(limit) {}
  size_t limit() const { return limit_; }  // 0: no cap
  size_t held() const { return held_.load(); }
  // Takes `bytes`, or returns false (nothing taken) when they would pass the limit.
  bool try_take(size_t bytes) const;
  // The same, or a DeviceError: "<what>: <bytes> would pass memory_limit=<limit> (the model holds <held>)".
  void take(size_t bytes, const std::string& what) const;
  void give(size_t bytes) const noexcept { held_.fetch_sub(bytes); }

 private:
  size_t limit_;
  mutable std::atomic<size_t> held_{0};
};

}  // namespace dnnx::cuda
