// Training state in the memory of the backend it trains on: host memory on a host backend (the
// CPU), device memory through Backend::allocate/release on a device backend. Owned (RAII) and
// only grown; contents are lost when it grows.
#pragma once
#include <cstddef>
#include <cstdint>

#include "runtime/device_memory.h"
#include "runtime/executor.h"
#include "runtime/training.h"

namespace dnnx {

class TrainBuffer {
 public:
  void reserve(const Backend& backend, size_t bytes);
  uint8_t* data() const { return on_device_ ? static_cast<uint8_t*>(device_.data()) : host_.data(); }
  template <class T>
  T* as() const { return reinterpret_cast<T*>(data()); }

 private:
  bool on_device_ = false;
  HostBuffer host_;
  DeviceBuffer device_;
};

// Page-locked host memory from TrainingOps::allocate_host (RAII); empty (data() null) where the
// ops give none. Only grown; contents are lost when it grows.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { reset(); }
  void reserve(const TrainingOps& ops, size_t bytes);
  uint8_t* data() const { return static_cast<uint8_t*>(data_); }

 private:
  void reset() noexcept;
  const TrainingOps* ops_ = nullptr;
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

// Copies between the host and the backend's memory (a memcpy on a host backend). to_host
// returns with `dst` filled; to_backend is queued in the backend's order.
void copy_to_backend(const Backend& backend, void* dst, const void* src, size_t bytes);
void copy_to_host(const Backend& backend, void* dst, const void* src, size_t bytes);
// Queued (on a device) copy within the backend's memory.
void copy_in_backend(const Backend& backend, void* dst, const void* src, size_t bytes);
// dst[0..bytes) = 0, through a copy from a host buffer of zeros (planning time only).
void zero_in_backend(const Backend& backend, void* dst, size_t bytes);

}  // namespace dnnx
