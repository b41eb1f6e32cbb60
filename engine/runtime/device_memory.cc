#include "runtime/device_memory.h"

#include <utility>

namespace dnnx {

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : device_(std::exchange(other.device_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      capacity_(std::exchange(other.capacity_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    device_ = std::exchange(other.device_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { reset(); }

void DeviceBuffer::reset() noexcept {
  if (data_) device_->release(data_);
  data_ = nullptr;
  capacity_ = 0;
}

void DeviceBuffer::reserve(const Backend& backend, size_t bytes) {
  if (bytes <= capacity_ && (data_ || bytes == 0)) return;
  reset();  // free first, so that growing never needs old and new at once
  device_ = &device_services(backend, "device memory");
  data_ = device_->allocate(bytes);
  capacity_ = bytes;
}

DeviceConstants::DeviceConstants(const Graph& graph, const Backend& backend) {
  const DeviceServices& device = device_services(backend, "uploading the constants");
  buffers_.reserve(graph.constants.size());
  for (const auto& kv : graph.constants) {
    const ConstTensor& tensor = *kv.second;
    DeviceBuffer buffer;
    buffer.reserve(backend, tensor.data.size());
    if (!tensor.data.empty()) device.copy_to_device(buffer.data(), tensor.data.data(), tensor.data.size());
    where_[&tensor] = buffer.data();
    buffers_.push_back(std::move(buffer));
  }
  device.synchronize();
}

}  // namespace dnnx
