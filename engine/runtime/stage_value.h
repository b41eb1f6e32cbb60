// Note [device-resident stages]: on a device backend the values a staged plan hands on (Note
// [staged plans] in runtime/stages.h) stay in device memory. A stage's plan writes its carried
// values into device arrays (DeviceRunner::allocate_array, the backend's caching allocator) and
// the continuation reads them as device inputs (copied device to device into its arena); only
// what the host must read crosses to it: the inputs of the value-shaped node that the host runs
// (If's condition, a Loop's carried values, Compress's input; NonZero and NonMaxSuppression run on
// the device where it has their staged kernels, Note [device staged kernels], and read back only
// their counts), the value inputs of the next stage's plan key, and
// the graph's outputs at the end. Before, every carried value (a detector's feature maps among
// them) went to the host and back at each stage. A host backend's values are host memory as
// before; sequences and optionals are host values on either.
#pragma once
#include <memory>

#include "runtime/device_runner.h"
#include "runtime/values/host_value.h"

namespace dnnx {

// One tensor in a device array of its own, released (to the backend's allocator) with the last
// reference; its runner (which allocated it) outlives it: the engine that runs the stages.
class DeviceTensor {
 public:
  DeviceTensor(DeviceRunner& runner, TensorInfo info);
  ~DeviceTensor();
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;

  const TensorInfo& info() const { return info_; }
  void* data() const { return data_; }
  // The tensor's bytes copied to the host (after the runner's stream).
  ConstTensorPtr to_host() const;

 private:
  DeviceRunner& runner_;
  TensorInfo info_;
  size_t bytes_;  // allocated: the tensor's, at least 1 (an empty tensor still has an address)
  void* data_;
};

// A value between stages: in device memory (`device`), or a host value (`host`) otherwise.
struct StageValue {
  HostValue host;
  std::shared_ptr<const DeviceTensor> device;

  StageValue() = default;
  StageValue(HostValue v) : host(std::move(v)) {}  // NOLINT: a host value is a stage value
  explicit StageValue(std::shared_ptr<const DeviceTensor> d) : device(std::move(d)) {}

  bool present() const { return device != nullptr || host.present(); }
  // The value on the host: a device tensor copied back, a host value as it is.
  HostValue to_host() const { return device ? HostValue(device->to_host()) : host; }
};

}  // namespace dnnx
