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

void execute(const Plan& plan, const void* const* inputs, void* const* outputs, RunScratch& scratch) {
  scratch.arena.reserve(plan.arena_bytes);
  scratch.workspace.reserve(plan.workspace_bytes);
  uint8_t* arena = scratch.arena.data();
  std::vector<const void*>& ptrs = scratch.value_ptrs;
  ptrs.assign(plan.values.size(), nullptr);
  for (size_t id = 0; id < plan.values.size(); ++id) {
    const PlannedValue& v = plan.values[id];
    switch (v.storage) {
      case Storage::Arena: ptrs[id] = arena + v.offset; break;
      case Storage::GraphInput: ptrs[id] = inputs[v.input_index]; break;
      case Storage::Constant: ptrs[id] = v.constant->data.data(); break;
      case Storage::Absent: break;
    }
  }
  for (const PlannedLayer& layer : plan.layers) {
    if (!layer.kernel) continue;  // a view
    scratch.call_inputs.clear();
    scratch.call_outputs.clear();
    for (int id : layer.inputs) scratch.call_inputs.push_back(id < 0 ? nullptr : ptrs[id]);
    // Outputs are always arena values, so the const_cast returns memory we own.
    for (int id : layer.outputs) scratch.call_outputs.push_back(id < 0 ? nullptr : const_cast<void*>(ptrs[id]));
    layer.kernel->run(KernelArgs{scratch.call_inputs.data(), scratch.call_outputs.data(),
                                 scratch.workspace.data()});
  }
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    const PlannedValue& v = plan.values[plan.outputs[o]];
    std::memcpy(outputs[o], ptrs[plan.outputs[o]], v.info.bytes());
  }
}

}  // namespace dnnx
