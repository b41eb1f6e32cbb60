#include "core/executor.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace dnnx {

void HostBuffer::Free::operator()(uint8_t* p) const { std::free(p); }

void HostBuffer::reserve(size_t bytes) {
  if (bytes <= capacity_ && data_) return;
  const size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) throw std::bad_alloc();
  data_.reset(static_cast<uint8_t*>(p));
  capacity_ = rounded;
}

namespace {

// Every value's address for this run: arena values at their offsets, graph inputs where the
// caller's arrays are (host plans only), constants where the plan says.
void bind_values(const Plan& plan, uint8_t* arena, const void* const* inputs, std::vector<const void*>& ptrs) {
  ptrs.assign(plan.values.size(), nullptr);
  for (size_t id = 0; id < plan.values.size(); ++id) {
    const PlannedValue& v = plan.values[id];
    switch (v.storage) {
      case Storage::Arena: ptrs[id] = arena + v.offset; break;
      case Storage::GraphInput: ptrs[id] = inputs[v.input_index]; break;
      case Storage::Constant: ptrs[id] = v.data; break;
      case Storage::Absent: break;
    }
  }
}

void run_layer(const PlannedLayer& layer, const std::vector<const void*>& ptrs, void* workspace,
               RunScratch& scratch) {
  scratch.call_inputs.clear();
  scratch.call_outputs.clear();
  for (int id : layer.inputs) scratch.call_inputs.push_back(id < 0 ? nullptr : ptrs[id]);
  // Outputs are always arena values, so the const_cast returns memory we own.
  for (int id : layer.outputs) scratch.call_outputs.push_back(id < 0 ? nullptr : const_cast<void*>(ptrs[id]));
  layer.kernel->run(KernelArgs{scratch.call_inputs.data(), scratch.call_outputs.data(), workspace});
}

void execute_host(const Plan& plan, const void* const* inputs, void* const* outputs, RunScratch& scratch) {
  scratch.arena.reserve(plan.arena_bytes);
  scratch.workspace.reserve(plan.workspace_bytes);
  std::vector<const void*>& ptrs = scratch.value_ptrs;
  bind_values(plan, scratch.arena.data(), inputs, ptrs);
  for (const PlannedLayer& layer : plan.layers) {
    if (layer.kernel) run_layer(layer, ptrs, scratch.workspace.data(), scratch);  // no kernel: a view
  }
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    const PlannedValue& v = plan.values[plan.outputs[o]];
    // An empty output may have null pointers on both sides: memcpy must not see them.
    if (v.info.bytes() != 0) std::memcpy(outputs[o], ptrs[plan.outputs[o]], v.info.bytes());
  }
}

// Note [device memory]: a device plan keeps every value the kernels touch in device memory.
// The graph inputs are arena values, copied in from the caller's host arrays first; the
// constants were uploaded once at load (DeviceConstants); the outputs are copied back last,
// and that copy waits for the kernels. A kernel's DeviceError gains the layer's name here.
void execute_device(const Plan& plan, const Backend& backend, const void* const* inputs,
                    void* const* outputs, RunScratch& scratch) {
  backend.activate();
  scratch.device_arena.reserve(backend, plan.arena_bytes);
  scratch.device_workspace.reserve(backend, plan.workspace_bytes);
  std::vector<const void*>& ptrs = scratch.value_ptrs;
  bind_values(plan, static_cast<uint8_t*>(scratch.device_arena.data()), inputs, ptrs);
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const int id = plan.inputs[i];
    backend.copy_to_device(const_cast<void*>(ptrs[id]), inputs[i], plan.values[id].info.bytes());
  }
  for (const PlannedLayer& layer : plan.layers) {
    if (!layer.kernel) continue;
    try {
      run_layer(layer, ptrs, scratch.device_workspace.data(), scratch);
    } catch (const DeviceError& e) {
      throw DeviceError(layer.node->where() + ": " + e.what());
    }
  }
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    const int id = plan.outputs[o];
    backend.copy_to_host(outputs[o], ptrs[id], plan.values[id].info.bytes());
  }
  backend.synchronize();
}

}  // namespace

void execute(const Plan& plan, const Backend& backend, const void* const* inputs, void* const* outputs,
             RunScratch& scratch) {
  if (plan.device) {
    execute_device(plan, backend, inputs, outputs, scratch);
  } else {
    execute_host(plan, inputs, outputs, scratch);
  }
}

}  // namespace dnnx
