#include "train/train_buffer.h"

#include <cstring>
#include <vector>

namespace dnnx {

void TrainBuffer::reserve(const Backend& backend, size_t bytes) {
  on_device_ = !backend.uses_host_memory();
  if (on_device_) {
    device_.reserve(backend, bytes);
  } else {
    host_.reserve(bytes);
  }
}

void PinnedBuffer::reserve(const TrainingOps& ops, size_t bytes) {
  if (bytes <= capacity_ && data_) return;
  reset();
  ops_ = &ops;
  data_ = ops.allocate_host(bytes);
  capacity_ = data_ ? bytes : 0;
}

void PinnedBuffer::reset() noexcept {
  if (data_) ops_->release_host(data_);
  data_ = nullptr;
  capacity_ = 0;
}

namespace {

// A copy of `bytes`: memcpy where the backend computes in host memory, else the backend's own
// `device_copy` (DeviceServices::copy_to_device, copy_to_host or copy_on_device).
using DeviceCopy = void (DeviceServices::*)(void* dst, const void* src, size_t bytes) const;
void copy_with(const Backend& backend, DeviceCopy device_copy, void* dst, const void* src, size_t bytes) {
  if (const DeviceServices* device = backend.device()) {
    (device->*device_copy)(dst, src, bytes);
  } else {
    std::memcpy(dst, src, bytes);
  }
}

}  // namespace

void copy_to_backend(const Backend& backend, void* dst, const void* src, size_t bytes) {
  if (bytes != 0) copy_with(backend, &DeviceServices::copy_to_device, dst, src, bytes);
}

void copy_to_host(const Backend& backend, void* dst, const void* src, size_t bytes) {
  if (bytes != 0) copy_with(backend, &DeviceServices::copy_to_host, dst, src, bytes);
}

void copy_in_backend(const Backend& backend, void* dst, const void* src, size_t bytes) {
  if (bytes != 0 && dst != src) copy_with(backend, &DeviceServices::copy_on_device, dst, src, bytes);
}

void zero_in_backend(const Backend& backend, void* dst, size_t bytes) {
  if (bytes == 0) return;
  if (backend.uses_host_memory()) {
    std::memset(dst, 0, bytes);
    return;
  }
  const std::vector<uint8_t> zeros(bytes, 0);
  backend.device()->copy_to_device(dst, zeros.data(), bytes);
  backend.synchronize();  // `zeros` goes out of scope
}

}  // namespace dnnx
