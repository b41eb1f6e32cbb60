#include "runtime/executor.h"

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

RunIO RunIO::host(size_t n_inputs, const void* const* inputs, size_t n_outputs, void* const* outputs) {
  RunIO io;
  io.inputs.assign(inputs, inputs + n_inputs);
  io.input_memory.assign(n_inputs, Memory::Host);
  io.outputs.assign(outputs, outputs + n_outputs);
  return io;
}

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

namespace {

void run_layer(const PlannedLayer& layer, void* workspace, CallScratch& call) {
  const std::vector<const void*>& ptrs = call.value_ptrs;
  call.call_inputs.clear();
  call.call_outputs.clear();
  for (int id : layer.inputs) call.call_inputs.push_back(id < 0 ? nullptr : ptrs[id]);
  // Outputs are always arena values, so the const_cast returns memory we own.
  for (int id : layer.outputs) call.call_outputs.push_back(id < 0 ? nullptr : const_cast<void*>(ptrs[id]));
  layer.kernel->run(KernelArgs{call.call_inputs.data(), call.call_outputs.data(), workspace, call.strings});
}

}  // namespace

void run_layers(const Plan& plan, void* workspace, CallScratch& call, LayerTimer* timer) {
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const PlannedLayer& layer = plan.layers[i];
    if (timer) timer->mark(i);
    if (!layer.kernel) continue;  // a view, a folded or an empty layer: nothing runs
    try {
      run_layer(layer, workspace, call);
    } catch (const DeviceLostError& e) {
      // Kernels run ahead of the host: the fault may be an earlier layer's, unless every launch waits.
      throw DeviceLostError(layer.node->where() + ": " + e.what() +
                            " [seen while this layer was queued; with CUDA_LAUNCH_BLOCKING=1 that is the layer that "
                            "faulted]");
    } catch (const DeviceError& e) {
      throw DeviceError(layer.node->where() + ": " + e.what());
    }
  }
  if (timer) timer->mark(plan.layers.size());
}

void execute_host(const Plan& plan, const RunIO& io, RunScratch& scratch, LayerTimer* timer) {
  scratch.arena.reserve(plan.arena_bytes);
  scratch.workspace.reserve(plan.workspace_bytes);
  std::vector<const void*>& ptrs = scratch.call.value_ptrs;
  bind_values(plan, scratch.arena.data(), io.inputs.data(), ptrs);
  // Note [string tensors]: a caller that reads no string output (a profile) passes no store;
  // the strings its kernels make then live as long as this run.
  std::unique_ptr<StringStore> local;
  if (plan.has_strings && !io.strings) local = std::make_unique<StringStore>();
  scratch.call.strings = io.strings ? io.strings : local.get();
  run_layers(plan, scratch.workspace.data(), scratch.call, timer);
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    const PlannedValue& v = plan.values[plan.outputs[o]];
    // An empty output may have null pointers on both sides: memcpy must not see them.
    if (v.info.bytes() != 0) std::memcpy(io.outputs[o], ptrs[plan.outputs[o]], v.info.bytes());
  }
}

}  // namespace dnnx
