// Engine::run_staged_on_device: the node a device plan stops at, on its staged kernel (Note
// [device staged kernels] in runtime/staged_kernel.h). Its inputs stay in (or go to) device
// memory, the kernel's count crosses to the host as one small copy, and its outputs are device
// arrays the continuation reads as device inputs (Note [device-resident stages]).
#include "runtime/engine.h"

namespace dnnx {

namespace {

// A tensor of raw bytes: the workspace's type.
TensorInfo byte_tensor(size_t bytes) { return TensorInfo{{static_cast<int64_t>(bytes)}, DType::UInt8}; }

}  // namespace

bool Engine::run_staged_on_device(const Plan& plan, const Node& node, const StageSlots& slots,
                                  std::vector<StageValue>& values) {
  // The inputs as device memory: a previous stage's array as it is, a constant's device copy, a
  // host value (a graph input given as a host array) uploaded into an array of its own.
  std::vector<std::shared_ptr<const DeviceTensor>> held;
  std::vector<const void*> inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const std::string& name = node.inputs[i];
    if (name.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    const int slot = slots.node_inputs[i];
    if (slot < 0) {
      inputs.push_back(device_constants_->find(*node_constant(node, name)));
      continue;
    }
    const StageValue& value = values[static_cast<size_t>(slot)];
    if (value.device) {
      inputs.push_back(value.device->data());
      continue;
    }
    const HostValue& v = value.host;
    if (!v.is_tensor() || !v.tensor) node_fail<InvalidModelError>(node, "input '" + name + "' is not a tensor");
    auto uploaded = std::make_shared<DeviceTensor>(*device_, v.tensor->info);
    if (!v.tensor->data.empty()) device_->array_from_host(uploaded->data(), v.tensor->data.data(), v.tensor->data.size());
    inputs.push_back(uploaded->data());
    held.push_back(std::move(uploaded));
  }
  // The workspace lives for this run alone (released in the stream's order, after the write).
  const DeviceTensor workspace(*device_, byte_tensor(plan.stage_workspace));
  const StagedArgs args{inputs.data(), inputs.size(), workspace.data()};
  StagedCount counted;
  {
    std::unique_lock<std::mutex> turn = device_->turn();
    backend_->activate();
    counted = plan.stage_kernel->count(args);
  }
  if (!counted.on_host.empty()) return false;  // the engine's host compute runs it this time
  std::vector<std::shared_ptr<const DeviceTensor>> outputs;
  std::vector<void*> out_ptrs;
  for (const TensorInfo& t : counted.outputs) {
    auto d = std::make_shared<DeviceTensor>(*device_, t);
    out_ptrs.push_back(d->data());
    outputs.push_back(std::move(d));
  }
  {
    std::unique_lock<std::mutex> turn = device_->turn();
    backend_->activate();
    plan.stage_kernel->write(args, out_ptrs.data());
  }
  for (size_t o = 0; o < node.outputs.size() && o < outputs.size(); ++o) {
    const int slot = slots.node_outputs[o];
    if (slot >= 0) values[static_cast<size_t>(slot)] = StageValue(outputs[o]);
  }
  return true;
}

}  // namespace dnnx
