// dnnx.DeviceArray: device memory a model hands to its caller (Model.run(output="device"),
// Model.to_device), exposed through __cuda_array_interface__ (v3) and DLPack so that CuPy and
// PyTorch read it in place. Note [device array lifetime]:
//   - the memory comes from the model's stream-ordered pool and is complete when the array is
//     handed out (runs return with their outputs written), so a reader need not synchronize;
//   - it is freed when the last reference goes: the DeviceArray, or whatever holds a DLPack
//     capsule of it (torch.from_dlpack's tensor). Each keeps the model alive;
//   - a DLPack consumer that names its stream (__dlpack__(stream=S), as torch.from_dlpack and
//     cupy.from_dlpack do) is waited for: the memory returns to the pool only after the work
//     queued on S when the last reference went. A reader through __cuda_array_interface__
//     names no stream: keep a reference until its work has finished.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "bindings.h"
#include "runtime/engine.h"

namespace dnnx {

class DeviceArray {
 public:
  // Uninitialised memory for `info` on the engine's device (DeviceError when there is none).
  DeviceArray(std::shared_ptr<Engine> engine, TensorInfo info);
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray();

  void* data() const { return data_; }
  const TensorInfo& info() const { return info_; }
  int device() const { return device_; }
  const std::shared_ptr<Engine>& engine() const { return engine_; }
  // A stream that reads the memory (DLPack's consumer stream): frees wait for it.
  void add_reader(uintptr_t stream);
  const std::vector<uintptr_t>& readers() const { return readers_; }

 private:
  std::shared_ptr<Engine> engine_;
  TensorInfo info_;
  int device_ = -1;
  void* data_ = nullptr;
  std::vector<uintptr_t> readers_;
};

// Registers dnnx.DeviceArray (called by bind_engine before the Engine class).
void bind_device_array(py::module_& m);

}  // namespace dnnx
