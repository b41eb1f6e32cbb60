// Runs a Plan: a flat walk over its layers, each kernel bound to arena offsets.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/device_memory.h"
#include "core/planner.h"

namespace dnnx {

// 64-byte aligned, uninitialised host memory that only grows.
class HostBuffer {
 public:
  void reserve(size_t bytes);
  uint8_t* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t capacity_ = 0;
};

// Everything one run needs besides the plan; one per concurrent run. A host backend uses the
// host buffers, a device backend the device ones.
struct RunScratch {
  HostBuffer arena;
  HostBuffer workspace;
  DeviceBuffer device_arena;
  DeviceBuffer device_workspace;
  std::vector<const void*> value_ptrs;
  std::vector<const void*> call_inputs;
  std::vector<void*> call_outputs;
};

// inputs: the graph inputs in graph order; outputs: buffers for plan.outputs (caller-owned);
// both in host memory. `backend` is the one the plan was built for.
void execute(const Plan& plan, const Backend& backend, const void* const* inputs, void* const* outputs,
             RunScratch& scratch);

}  // namespace dnnx
