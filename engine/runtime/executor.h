// Runs a Plan: a flat walk over its layers, each kernel bound to arena offsets. A host plan runs
// here; a device plan runs through runtime/device_runner.h, which uses the pieces below.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/planner.h"

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

// Where a buffer the caller hands to a run lives.
enum class Memory { Host, Device };

// The caller's buffers for one run. A device input is on the backend's device (the caller has
// checked); device outputs come from Backend::allocate_array.
struct RunIO {
  std::vector<const void*> inputs;    // graph-input order
  std::vector<Memory> input_memory;   // one per input
  std::vector<void*> outputs;         // one per plan output, sized for it
  Memory output_memory = Memory::Host;
  // Where the run's string kernels put the strings they make; the caller keeps it alive while
  // it reads the string outputs (Note [string tensors] in ir/tensor.h). Null: the run makes none.
  StringStore* strings = nullptr;
  // External streams (Backend::wait_for_stream) that device inputs were written on.
  std::vector<uintptr_t> input_streams;
  // A device run waits for its stream before it returns; false: it returns once its work is
  // queued, its device outputs written in the stream's order (Note [queued stage runs]).
  bool wait = true;

  // Host arrays in and out: what a host plan takes, and a device plan's simplest call.
  static RunIO host(size_t n_inputs, const void* const* inputs, size_t n_outputs, void* const* outputs);
};

// What one run needs besides the plan and its memory: the per-call pointer lists.
struct CallScratch {
  std::vector<const void*> value_ptrs;
  std::vector<const void*> call_inputs;
  std::vector<void*> call_outputs;
  StringStore* strings = nullptr;  // RunIO::strings of the run under way
};

// Everything a host run needs besides the plan; one per concurrent run.
struct RunScratch {
  HostBuffer arena;
  HostBuffer workspace;
  CallScratch call;
};

// Every value's address for a run: arena values at their offsets, graph inputs where the
// caller's arrays are (host plans only), constants where the plan says.
void bind_values(const Plan& plan, uint8_t* arena, const void* const* inputs, std::vector<const void*>& ptrs);

// Queues (on a device) or runs (on the host) every layer in order. With a timer: mark(i)
// before layer i and mark(layers) after the last. A layer's DeviceError gains the layer's name.
void run_layers(const Plan& plan, void* workspace, CallScratch& call, LayerTimer* timer = nullptr);

// Per-layer times of repeated runs (Engine::profile).
struct LayerTimes {
  std::vector<std::vector<double>> ms;  // [layer][repeat], milliseconds; 0 for a view
  bool graph = false;                   // measured on a replayed device graph (no launch gaps)
};

// Runs a host plan on host arrays.
void execute_host(const Plan& plan, const RunIO& io, RunScratch& scratch, LayerTimer* timer = nullptr);

}  // namespace dnnx
