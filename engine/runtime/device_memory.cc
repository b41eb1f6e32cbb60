#include "runtime/device_memory.h"

#include <utility>

namespace dnnx {

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : backend_(std::exchange(other.backend_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      capacity_(std::exchange(other.capacity_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    backend_ = std::exchange(other.backend_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { reset(); }

void DeviceBuffer::reset() noexcept {
  if (data_) backend_->release(data_);
  data_ = nullptr;
  capacity_ = 0;
}

void DeviceBuffer::reserve(const Backend& backend, size_t bytes) {
  if (bytes <= capacity_ && (data_ || bytes == 0)) return;
  reset();  // free first, so that growing never needs old and new at once
  backend_ = &backend;
  data_ = backend.allocate(bytes);
  capacity_ = bytes;
}

DeviceConstants::DeviceConstants(const Graph& graph, const Backend& backend) {
  buffers_.reserve(graph.constants.size());
  for (const auto& kv : graph.constants) {
    const ConstTensor& tensor = *kv.second;
    DeviceBuffer buffer;
    buffer.reserve(backend, tensor.data.size());
    if (!tensor.data.empty()) backend.copy_to_device(buffer.data(), tensor.data.data(), tensor.data.size());
    where_[&tensor] = buffer.data();
    buffers_.push_back(std::move(buffer));
  }
  backend.synchronize();
}

}  // namespace dnnx
