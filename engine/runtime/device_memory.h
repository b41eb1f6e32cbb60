// Device memory owned through a device backend's DeviceServices (allocate/release): the run arena and workspace
// of a device backend, and the graph's constants uploaded once at load.
#pragma once
#include <cstddef>
#include <map>
#include <vector>

#include "runtime/backend.h"
#include "ir/graph.h"

namespace dnnx {

// Uninitialised device memory that only grows; freed through the backend that gave it.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  ~DeviceBuffer();

  // Keeps the buffer when it holds `bytes` already, else replaces it (contents are lost).
  void reserve(const Backend& backend, size_t bytes);
  void* data() const { return data_; }

 private:
  void reset() noexcept;

  const DeviceServices* device_ = nullptr;
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

// Every constant of the graph copied to the device once; plans read the device copies.
class DeviceConstants {
 public:
  DeviceConstants(const Graph& graph, const Backend& backend);
  // The device copy of a constant of this graph.
  const void* find(const ConstTensor& tensor) const { return where_.at(&tensor); }

 private:
  std::vector<DeviceBuffer> buffers_;
  std::map<const ConstTensor*, const void*> where_;
};

}  // namespace dnnx
